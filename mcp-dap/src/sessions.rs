//! The Sessions actor, the supervisor of the DAP side: it starts each session (its Adapter
//! and Session actors), keeps the handles the tools name (a bounded number), publishes the
//! resource list, and ends every session at shutdown.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use actix::prelude::*;
use tokio::sync::watch;

use mcp_bridge::server::{ListenEvent, ResourceDef, Server};

use crate::adapter::{Adapter, AdapterStartError, NoChildSession};
use crate::adapters::{self, AdapterDef};
use crate::session::{self, Child, Ended, Ending, Finish, LaunchSpec, Note, Session, Start};

/// Sessions open at once. Each holds an adapter and a debuggee process; the bound keeps a
/// model that forgets to terminate from filling the machine. A child session whose debuggee
/// ended holds neither, and does not count.
pub const MAX_SESSIONS: usize = 8;

/// Child sessions whose debuggee ended that stay readable (state and output) until they are
/// terminated; beyond it the oldest is forgotten, so that a program that runs children for
/// ever (a `multiprocessing` pool) costs bounded memory.
pub const MAX_ENDED_CHILD_SESSIONS: usize = 32;

/// How long the end of all sessions may take at shutdown (each `disconnect`, then the stop
/// steps of each process group) before the process exits anyway.
pub const SHUTDOWN_TIME_LIMIT: Duration = Duration::from_secs(10);

/// Why no session opens (the `launch` and `attach` tools' error after their prefix, and the
/// line in a parent's output for a child session).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// [`MAX_SESSIONS`] sessions are open or starting.
    #[error("{MAX_SESSIONS} sessions are open, the most at once: terminate one first")]
    Full,
    /// The adapter could not be started or connected to.
    #[error(transparent)]
    Start(#[from] AdapterStartError),
}

/// Starts a session's actors with `adapter`.
#[derive(Message)]
#[rtype(result = "Result<(String, Addr<Session>), OpenError>")]
pub struct Open {
    /// The adapter.
    pub adapter: AdapterDef,
    /// The session whose debuggee started this one's, for a child session.
    pub parent: Option<String>,
}

/// The Session of an id.
#[derive(Message)]
#[rtype(result = "Option<Addr<Session>>")]
pub struct Find(pub String);

/// Ends one session and forgets it; `false` when the id names none.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct Close(pub String, pub Ending);

/// Ends every session (the end of stdin).
#[derive(Message)]
#[rtype(result = "()")]
pub struct CloseAll;

/// The actor.
pub struct Sessions {
    server: Server,
    open: BTreeMap<String, Addr<Session>>,
    /// The child sessions of `open` whose debuggee ended, oldest first: they do not count
    /// against the bound.
    ended: VecDeque<String>,
    next_id: u64,
    /// Sessions whose adapter is being connected to: they count against the bound.
    starting: usize,
    listed: watch::Sender<Vec<ResourceDef>>,
}

impl Sessions {
    /// The supervisor; `listed` carries the resource list to the server's lister.
    pub fn new(server: Server, listed: watch::Sender<Vec<ResourceDef>>) -> Self {
        Self {
            server,
            open: BTreeMap::new(),
            ended: VecDeque::new(),
            next_id: 1,
            starting: 0,
            listed,
        }
    }

    /// Whether `MAX_SESSIONS` sessions are open or starting.
    fn full(&self) -> bool {
        self.open.len() - self.ended.len() + self.starting >= MAX_SESSIONS
    }

    fn publish(&self) {
        let defs = self
            .open
            .keys()
            .flat_map(|id| {
                [
                    ResourceDef::new(&session::state_uri(id), &format!("session {id} state"))
                        .mime_type("application/json"),
                    ResourceDef::new(&session::output_uri(id), &format!("session {id} output"))
                        .mime_type("text/plain"),
                ]
            })
            .collect();
        self.listed.send_replace(defs);
        self.server.notify(ListenEvent::ResourcesListChanged);
    }
}

impl Actor for Sessions {
    type Context = Context<Self>;
}

impl Handler<Open> for Sessions {
    type Result = ResponseActFuture<Self, Result<(String, Addr<Session>), OpenError>>;

    fn handle(&mut self, open: Open, ctx: &mut Context<Self>) -> Self::Result {
        if self.full() {
            return Box::pin(fut::ready(Err(OpenError::Full)));
        }
        let context = Context::<Session>::new();
        let connected = match Adapter::spawn(&open.adapter, context.address().recipient()) {
            Ok(connected) => connected,
            Err(e) => return Box::pin(fut::ready(Err(e.into()))),
        };
        self.starting += 1;
        let children = ctx.address().recipient();
        let ended = ctx.address().recipient();
        Box::pin(connected.into_actor(self).map(move |adapter, act, _| {
            act.starting -= 1;
            let adapter = adapter?.start();
            let id = format!("s{}", act.next_id);
            act.next_id += 1;
            let session = Session::new(id.clone(), adapter, act.server.clone())
                .child_of(open.parent)
                .following(children, ended, open.adapter);
            let session = context.run(session);
            act.open.insert(id.clone(), session.clone());
            act.publish();
            Ok((id, session))
        }))
    }
}

impl Handler<Child> for Sessions {
    type Result = Result<(), NoChildSession>;

    fn handle(&mut self, child: Child, ctx: &mut Context<Self>) -> Self::Result {
        if self.full() {
            return Err(NoChildSession::Full(MAX_SESSIONS));
        }
        let parent = self.open.get(&child.parent).cloned();
        let adapter = adapters::child_adapter(&child.adapter, &child.configuration);
        let request = if child.request == "launch" {
            "launch"
        } else {
            "attach"
        };
        let name = child.configuration["name"]
            .as_str()
            .unwrap_or("a child process")
            .to_owned();
        let spec = LaunchSpec {
            request,
            arguments: child.configuration,
            adapter_id: adapter.adapter_id.clone(),
            breakpoints: child.breakpoints,
        };
        let me = ctx.address();
        let opening = <Self as Handler<Open>>::handle(
            self,
            Open {
                adapter,
                parent: Some(child.parent),
            },
            ctx,
        );
        ctx.spawn(opening.then(move |opened, act, _| {
            async move {
                let failure = match opened {
                    Ok((id, session)) => match session.send(Start(spec)).await {
                        Ok(Ok(())) => return,
                        Ok(Err(e)) => {
                            let _ = me.send(Close(id, Ending::Detach)).await;
                            e.to_string()
                        }
                        Err(_) => "the session ended".to_owned(),
                    },
                    Err(e) => e.to_string(),
                };
                if let Some(parent) = parent {
                    parent.do_send(Note(format!("{name} could not be debugged: {failure}")));
                }
            }
            .into_actor(act)
        }));
        Ok(())
    }
}

impl Handler<Find> for Sessions {
    type Result = Option<Addr<Session>>;

    fn handle(&mut self, Find(id): Find, _: &mut Context<Self>) -> Self::Result {
        self.open.get(&id).cloned()
    }
}

impl Handler<Ended> for Sessions {
    type Result = ();

    fn handle(&mut self, Ended(id): Ended, ctx: &mut Context<Self>) {
        if !self.open.contains_key(&id) || self.ended.contains(&id) {
            return;
        }
        self.ended.push_back(id);
        if self.ended.len() <= MAX_ENDED_CHILD_SESSIONS {
            return;
        }
        let Some(oldest) = self.ended.pop_front() else {
            return;
        };
        if let Some(session) = self.open.remove(&oldest) {
            self.publish();
            ctx.spawn(
                async move {
                    let _ = session.send(Finish(Ending::Detach)).await;
                }
                .into_actor(self),
            );
        }
    }
}

impl Handler<Close> for Sessions {
    type Result = ResponseFuture<bool>;

    fn handle(&mut self, Close(id, ending): Close, _: &mut Context<Self>) -> Self::Result {
        let Some(session) = self.open.remove(&id) else {
            return Box::pin(async { false });
        };
        self.ended.retain(|ended| *ended != id);
        self.publish();
        Box::pin(async move {
            let _ = session.send(Finish(ending)).await;
            true
        })
    }
}

impl Handler<CloseAll> for Sessions {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: CloseAll, _: &mut Context<Self>) -> Self::Result {
        self.ended.clear();
        let sessions: Vec<_> = std::mem::take(&mut self.open).into_values().collect();
        Box::pin(async move {
            let ends = sessions
                .iter()
                .map(|session| session.send(Finish(Ending::Terminate)));
            let _ = tokio::time::timeout(SHUTDOWN_TIME_LIMIT, futures_util::future::join_all(ends))
                .await;
        })
    }
}
