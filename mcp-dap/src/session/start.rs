//! A session's start: the launch sequencing of the DAP specification ("Overview: Launch
//! Sequencing"), from the `initialize` request through `launch` (or `attach`) and the
//! `initialized` event to the configuration phase (the breakpoints) and `configurationDone`.

use std::time::Duration;

use actix::prelude::*;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::{ADAPTERS_WITHOUT_VARIABLE_PAGING, Session, Status};
use crate::adapter::{DapError, GoneCause, Request, RequestThen};

/// How long a start waits for the adapter's `initialized` event (or its answer to `launch`,
/// whichever comes first, and then for the other).
pub const INITIALIZED_TIME_LIMIT: Duration = Duration::from_secs(30);

/// What to launch.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    /// `launch` or `attach`.
    pub request: &'static str,
    /// The request's arguments (adapter-specific, DAP "LaunchRequestArguments" and
    /// "AttachRequestArguments").
    pub arguments: Value,
    /// The adapter's id for `initialize`.
    pub adapter_id: String,
    /// The `setBreakpoints` arguments sent in the configuration phase, before
    /// `configurationDone`: a child session gets its parent's (as VS Code sends each child
    /// session the breakpoints).
    pub breakpoints: Vec<Value>,
}

/// Runs the start sequence. Answers once `launch` is answered.
#[derive(Message)]
#[rtype(result = "Result<(), DapError>")]
pub struct Start(pub LaunchSpec);

/// What ends the first wait of a start: DAP's launch sequence lets either come first.
enum First {
    /// The `initialized` event: the configuration starts.
    Initialized,
    /// The answer to `launch` (or `attach`).
    Answered(Result<Value, DapError>),
    /// The session ended (`exited`, `terminated`, the adapter gone) before either.
    Ended,
}

impl Handler<Start> for Session {
    type Result = ResponseActFuture<Self, Result<(), DapError>>;

    fn handle(&mut self, Start(spec): Start, _: &mut Context<Self>) -> Self::Result {
        // Only a launch stops at its entry: a child's attach configuration carries its
        // parent's `stopOnEntry` (debugpy copies the launch's), and its first stop is its own.
        self.entry_pending = spec.request == "launch"
            && spec.arguments.get("stopOnEntry") == Some(&Value::Bool(true));
        self.state.pages_variables =
            !ADAPTERS_WITHOUT_VARIABLE_PAGING.contains(&spec.adapter_id.as_str());
        let (initialized, mut initialized_heard) = oneshot::channel();
        self.initialized = Some(initialized);
        let adapter = self.adapter.clone();
        // A `noDebug` launch has no configuration phase (debugpy sends no `initialized`).
        let no_debug = spec.arguments.get("noDebug") == Some(&Value::Bool(true));
        let sequence = async move {
            let gone = |_| DapError::Gone(GoneCause::ActorEnded);
            adapter
                .send(Request {
                    command: "initialize".into(),
                    arguments: Some(json!({
                        "clientID": "mcp-dap", "clientName": "mcp-dap",
                        "adapterID": spec.adapter_id, "linesStartAt1": true,
                        "columnsStartAt1": true, "pathFormat": "path",
                        "supportsStartDebuggingRequest": true,
                    })),
                })
                .await
                .map_err(gone)?
                .map_err(|e| match e {
                    DapError::Gone(cause) => DapError::Broken(cause),
                    other => other,
                })?;
            // DAP "Launch Sequencing": `initialized` may come before or after the answer to
            // `launch`; debugpy answers `launch` only after `configurationDone`, lldb-dap
            // answers it first. Whichever comes first decides: a refusal ends the start at
            // once with the adapter's words, `initialized` starts the configuration.
            let (launched, mut launch_answer) = oneshot::channel();
            adapter.do_send(RequestThen {
                request: Request {
                    command: spec.request.into(),
                    arguments: Some(spec.arguments),
                },
                reply: launched,
            });
            let ended = || Err(DapError::Gone(GoneCause::SessionEnded));
            let first = async {
                tokio::select! {
                    heard = &mut initialized_heard => match heard {
                        Ok(()) => First::Initialized,
                        Err(_) => First::Ended,
                    },
                    answer = &mut launch_answer => First::Answered(answer.unwrap_or_else(|_| ended())),
                }
            };
            let neither = || {
                DapError::Silent(
                    format!("`initialized` event nor answer to `{}`", spec.request),
                    INITIALIZED_TIME_LIMIT.as_secs(),
                )
            };
            let first = tokio::time::timeout(INITIALIZED_TIME_LIMIT, first)
                .await
                .map_err(|_| neither())?;
            let answered = match first {
                First::Ended => return Ok(()),
                // The request's own limit (`REQUEST_TIME_LIMIT`) ran out before the start's
                // wait did: neither came, and the error says so whichever timer fired first.
                First::Answered(Err(DapError::Timeout(..))) => return Err(neither()),
                First::Answered(Err(refused)) => return Err(refused),
                First::Answered(Ok(_)) if no_debug => return Ok(()),
                First::Answered(Ok(_)) => {
                    match tokio::time::timeout(INITIALIZED_TIME_LIMIT, initialized_heard).await {
                        Ok(Ok(())) => true,
                        // The program ended before its configuration: its state stays.
                        Ok(Err(_)) => return Ok(()),
                        Err(_) => {
                            return Err(DapError::Silent(
                                format!(
                                    "`initialized` event after the answer to `{}`",
                                    spec.request
                                ),
                                INITIALIZED_TIME_LIMIT.as_secs(),
                            ));
                        }
                    }
                }
                First::Initialized => false,
            };
            // DAP "Launch Sequencing": the breakpoints go in the configuration phase. One
            // the adapter refuses leaves the others and the start as they are.
            for arguments in spec.breakpoints {
                let _ = adapter
                    .send(Request {
                        command: "setBreakpoints".into(),
                        arguments: Some(arguments),
                    })
                    .await;
            }
            adapter
                .send(Request {
                    command: "configurationDone".into(),
                    arguments: None,
                })
                .await
                .map_err(gone)??;
            if !answered {
                launch_answer.await.unwrap_or_else(|_| ended())?;
            }
            Ok(())
        };
        Box::pin(sequence.into_actor(self).map(|started, act, _| {
            // The adapter that went away before the start was done: its cause.
            if let (Ok(()), Some(cause)) = (&started, &act.state.cause) {
                return Err(DapError::Gone(cause.clone()));
            }
            // A program launched without a stop on entry runs once `launch` is answered: no
            // adapter is bound to send `continued` for it.
            if started.is_ok() && act.state.status == Status::Starting {
                act.state.status = Status::Running;
                act.changed_state();
            }
            started
        }))
    }
}
