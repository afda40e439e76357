//! The embedded bridge's example server (examples/embedded/main.rs) written on rmcp 3.x, the
//! official Rust SDK, for the side-by-side size and start measurement
//! (scripts/bench/embedded-size-start.sh, docs/performance.md): the same tools `echo`,
//! `ask_name` (an input request) and `add_tool` (a list change on the listen streams), the
//! prompt `greet` and the resource `example://readme`, over stdio. rmcp serves both revisions
//! itself (initialize or server/discover).
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
    Example { changes }.serve(stdio()).await?.waiting().await?;
    Ok(())
}
