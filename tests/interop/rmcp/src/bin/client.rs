//! A REAL 2026-07-28 client (rmcp 3.x, the official Rust SDK; `server/discover` lifecycle)
//! against the embedded bridge's example (examples/embedded/main.rs, the modern path). Checks exact
//! values of tools, prompts, resources, one input request (an elicitation answered "Ada", which
//! rmcp fulfils and retries) and one list change on a `subscriptions/listen` stream. Prints one
//! line: `ok embedded-rmcp: ...` (exit 0) or `FAIL embedded-rmcp: <why>` (exit 1).
//!
//!   client -- SERVER_CMD [ARGS...]

use std::time::Duration;

use anyhow::{Context, bail, ensure};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ElicitRequestParams, ElicitResult,
    ElicitationAction, GetPromptRequestParams, Implementation, InitializeRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ServerNotification, SubscriptionFilter,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::json;
use std::sync::{Arc, Mutex};

const TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Clone, Default)]
struct Answers {
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Answers {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request
            && let Ok(mut asked) = self.asked.lock()
        {
            asked.push(message);
        }
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"})))
    }

    fn get_info(&self) -> InitializeRequestParams {
        InitializeRequestParams::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("mcp-bridge-interop-rmcp", "1.0.0"),
        )
    }
}

fn texts(result: &rmcp::model::CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

async fn run(cmd: Vec<String>) -> anyhow::Result<&'static str> {
    let mut command = tokio::process::Command::new(&cmd[0]);
    command.args(&cmd[1..]);
    let answers = Answers::default();
    let asked = answers.asked.clone();
    let client = answers
        .serve_with_lifecycle(
            TokioChildProcess::new(command)?,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .context("server/discover")?;

    let tools = client.list_all_tools().await.context("tools/list")?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    ensure!(
        names == ["echo", "ask_name", "add_tool"],
        "tool names: {names:?}"
    );
    let args = json!({"text": "h\u{e9} \u{2713}"});
    let echo = CallToolRequestParams::new("echo")
        .with_arguments(args.as_object().cloned().unwrap_or_default());
    let r = client.call_tool(echo).await.context("tools/call echo")?;
    ensure!(texts(&r) == ["h\u{e9} \u{2713}"], "echo: {:?}", texts(&r));

    let prompts = client.list_all_prompts().await.context("prompts/list")?;
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    ensure!(names == ["greet"], "prompt names: {names:?}");
    let p = client
        .get_prompt(GetPromptRequestParams::new("greet"))
        .await
        .context("prompts/get")?;
    let got = serde_json::to_value(&p.messages)?;
    ensure!(
        got == json!([{"role": "user", "content": {"type": "text", "text": "Say hi."}}]),
        "greet: {got}"
    );

    let resources = client
        .list_all_resources()
        .await
        .context("resources/list")?;
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    ensure!(uris == ["example://readme"], "resource URIs: {uris:?}");
    let rr = client
        .read_resource(ReadResourceRequestParams::new("example://readme"))
        .await
        .context("resources/read")?;
    let got = serde_json::to_value(&rr.contents)?;
    ensure!(
        got == json!([{"uri": "example://readme", "text": "Hi."}]),
        "readme: {got}"
    );

    let r = client
        .call_tool(CallToolRequestParams::new("ask_name"))
        .await
        .context("tools/call ask_name")?;
    ensure!(texts(&r) == ["Hi, Ada!"], "ask_name: {:?}", texts(&r));
    let seen = asked.lock().map(|a| a.clone()).unwrap_or_default();
    ensure!(seen == ["Your name?"], "elicitations: {seen:?}");

    let mut sub = client
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .context("subscriptions/listen")?;
    let r = client
        .call_tool(CallToolRequestParams::new("add_tool"))
        .await
        .context("tools/call add_tool")?;
    ensure!(
        texts(&r) == ["The tool list changed."],
        "add_tool: {:?}",
        texts(&r)
    );
    match tokio::time::timeout(TIMEOUT, sub.next()).await {
        Ok(Ok(Some(ServerNotification::ToolListChangedNotification(_)))) => {}
        other => bail!("the list change on the listen stream: {other:?}"),
    }
    let _ = sub.cancel().await;
    let _ = client.cancel().await;
    Ok(
        "server/discover (2026-07-28), echo, prompts/get greet, resources/read example://readme, \
        ask_name with one elicitation, a tools list change on the listen stream",
    )
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(split) = args.iter().position(|a| a == "--") else {
        eprintln!("usage: client -- SERVER_CMD [ARGS...]");
        std::process::exit(2);
    };
    let cmd = args[split + 1..].to_vec();
    if cmd.is_empty() {
        eprintln!("usage: client -- SERVER_CMD [ARGS...]");
        std::process::exit(2);
    }
    match tokio::time::timeout(TIMEOUT, run(cmd)).await {
        Ok(Ok(what)) => println!("ok embedded-rmcp: {what}"),
        Ok(Err(e)) => {
            println!("FAIL embedded-rmcp: {e:#}");
            std::process::exit(1);
        }
        Err(_) => {
            println!("FAIL embedded-rmcp: timed out after {TIMEOUT:?}");
            std::process::exit(1);
        }
    }
}
