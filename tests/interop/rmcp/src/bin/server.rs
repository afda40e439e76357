//! The embedded bridge's example server (examples/embedded/main.rs) written on rmcp 3.x, the
//! official Rust SDK, for the side-by-side size and start measurement
//! (scripts/bench/embedded-size-start.sh, docs/performance.md): the same tools `echo`,
//! `ask_name` (an input request) and `add_tool` (a list change on the listen streams), the
//! prompt `greet` and the resource `example://readme`, over stdio. rmcp serves both revisions
//! itself (initialize or server/discover). With the feature `http`, `--http ADDR` serves it over
//! rmcp's Streamable HTTP server instead, as examples/embedded's `--http` does
//! (scripts/bench/http-serve.py).
use rmcp::model::*;
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, transport::stdio};
use serde_json::json;
use tokio::sync::broadcast;

#[derive(Clone)]
struct Example {
    changes: broadcast::Sender<()>,
}

fn schema(value: serde_json::Value) -> std::sync::Arc<JsonObject> {
    std::sync::Arc::new(value.as_object().cloned().unwrap_or_default())
}

impl ServerHandler for Example {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_resources()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("embedded-example", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let text = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        let none = json!({"type": "object"});
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new("echo", "", schema(text)),
            Tool::new("ask_name", "", schema(none.clone())),
            Tool::new("add_tool", "", schema(none)),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = match request.name.as_ref() {
            "echo" => request
                .arguments
                .as_ref()
                .and_then(|a| a.get("text"))
                .and_then(|t| t.as_str())
                .unwrap_or_default()
                .to_owned(),
            "ask_name" => match request.input_responses.as_ref().and_then(|r| r.get("name")) {
                None => {
                    let mut input_requests = InputRequests::new();
                    let requested_schema = serde_json::from_value(json!({"type": "object",
                        "properties": {"name": {"type": "string"}}, "required": ["name"]}))
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                    input_requests.insert(
                        "name".into(),
                        InputRequest::Elicitation(ElicitRequest::new(
                            ElicitRequestParams::FormElicitationParams {
                                meta: None,
                                message: "Your name?".into(),
                                requested_schema,
                            },
                        )),
                    );
                    return Ok(InputRequiredResult::new(Some(input_requests), None).into());
                }
                Some(answer) => {
                    format!("Hi, {}!", answer["content"]["name"].as_str().unwrap_or("?"))
                }
            },
            "add_tool" => {
                let _ = self.changes.send(());
                "The tool list changed.".into()
            }
            name => {
                return Err(ErrorData::invalid_params(
                    format!("Unknown tool: {name}"),
                    None,
                ));
            }
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "greet",
            None::<String>,
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        _: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let message = PromptMessage::new_text(Role::User, "Say hi.");
        Ok(GetPromptResult::new(vec![message]).into())
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(
            "example://readme",
            "readme",
        )]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let contents = ResourceContents::TextResourceContents {
            uri: request.uri,
            mime_type: None,
            text: "Hi.".into(),
            meta: None,
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.changes.subscribe();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                change = changes.recv() => {
                    if change.is_err() { return Ok(()); }
                    if context.accepted().tools_list_changed == Some(true) {
                        let _ = context.sink().notify_tool_list_changed().await;
                    }
                }
            }
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let (changes, _) = broadcast::channel(16);
    #[cfg(feature = "http")]
    if let Some(addr) = http::addr()? {
        return http::serve(Example { changes }, addr).await;
    }
    Example { changes }.serve(stdio()).await?.waiting().await?;
    Ok(())
}

/// The same server over rmcp's Streamable HTTP server, on one thread like the stdio server and
/// examples/embedded's `--http`, each connection served by hyper's HTTP/1 server. By default
/// stateless (no `Mcp-Session-Id`; rmcp serves a 2026-07-28 request statelessly in any mode)
/// with JSON answers; with `--sessions`, rmcp's session mode (2025-11-25 clients get a session,
/// in memory, and SSE answers).
#[cfg(feature = "http")]
mod http {
    use super::Example;
    use hyper_util::rt::TokioIo;
    use rmcp::transport::streamable_http_server::session::SessionManager;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    use std::sync::Arc;

    /// `--http IP:PORT` and `--sessions` (in any order) from the command line, if given.
    pub fn addr() -> anyhow::Result<Option<(std::net::SocketAddr, bool)>> {
        let mut args: Vec<String> = std::env::args().skip(1).collect();
        let sessions = args.iter().any(|a| a == "--sessions");
        args.retain(|a| a != "--sessions");
        match args.as_slice() {
            [] if !sessions => Ok(None),
            [flag, addr] if flag == "--http" => Ok(Some((addr.parse()?, sessions))),
            _ => anyhow::bail!("usage: server [--http IP:PORT [--sessions]]"),
        }
    }

    pub async fn serve(
        example: Example,
        (addr, sessions): (std::net::SocketAddr, bool),
    ) -> anyhow::Result<()> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        eprintln!(
            "rmcp-example: listening on http://{}/mcp",
            listener.local_addr()?
        );
        let factory = move || Ok(example.clone());
        let config = StreamableHttpServerConfig::default().with_legacy_session_mode(sessions);
        if sessions {
            let manager = Arc::new(LocalSessionManager::default());
            accept(
                listener,
                StreamableHttpService::new(factory, manager, config),
            )
            .await
        } else {
            let manager = Arc::new(NeverSessionManager::default());
            let config = config.with_json_response(true);
            accept(
                listener,
                StreamableHttpService::new(factory, manager, config),
            )
            .await
        }
    }

    async fn accept<M: SessionManager>(
        listener: tokio::net::TcpListener,
        service: StreamableHttpService<Example, M>,
    ) -> anyhow::Result<()> {
        loop {
            let (stream, _) = listener.accept().await?;
            // Without it, the SSE answers of the session mode wait for the client's delayed
            // ACK (Nagle's algorithm, RFC 896, against RFC 1122 §4.2.3.2's delayed ACK):
            // 40 ms each on Linux.
            stream.set_nodelay(true)?;
            let service = service.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |request| {
                    let service = service.clone();
                    async move { Ok::<_, std::convert::Infallible>(service.handle(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), handler)
                    .await;
            });
        }
    }
}
