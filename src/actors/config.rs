//! The configuration of the running bridge (from the command line, `cli.rs`) and the time
//! limits of the forwarded methods: plain values that every layer may read, so no actor file
//! has to import another for them.

use std::sync::Arc;
use std::time::Duration;

use crate::protocol::listen::ListenTimings;
use crate::protocol::revisions::legacy::Forwarded;
use crate::protocol::rules::item_filter::ItemFilter;
use crate::transport::open::UpstreamSpec;

/// Time limits of forwarded requests.
#[derive(Clone, Debug)]
pub struct Timeouts {
    /// The list methods and `completion/complete` (120 s).
    pub list: Duration,
    /// The first round of `prompts/get` and `resources/read` (120 s).
    pub read: Duration,
    /// Each round of `tools/call` (1 h).
    pub call: Duration,
    /// Each round after the first of `prompts/get` and `resources/read` (1 h).
    pub later_read: Duration,
    /// The editor's answers to one round of input requests (1 h).
    pub input: Duration,
}

impl Timeouts {
    /// The time limit of the first round of a forwarded method: `tools/call` gets `call`,
    /// `prompts/get` and `resources/read` get `read`, the lists and completion get `list`.
    pub fn first_round(&self, method: Forwarded) -> Duration {
        match method {
            Forwarded::ToolsCall => self.call,
            Forwarded::PromptsGet | Forwarded::ResourcesRead => self.read,
            Forwarded::ToolsList
            | Forwarded::PromptsList
            | Forwarded::ResourcesList
            | Forwarded::ResourcesTemplatesList
            | Forwarded::CompletionComplete => self.list,
        }
    }
}

impl Timeouts {
    /// The time limit of each round after the first: `tools/call` keeps `call`; the other
    /// methods that may ask for input get `later_read`.
    pub fn later_round(&self, method: Forwarded) -> Duration {
        match method {
            Forwarded::ToolsCall => self.call,
            _ => self.later_read,
        }
    }
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            list: Duration::from_secs(120),
            read: Duration::from_secs(120),
            call: Duration::from_secs(3600),
            later_read: Duration::from_secs(3600),
            input: Duration::from_secs(3600),
        }
    }
}

/// Everything the running bridge needs to know, from the command line.
#[derive(Clone, Debug)]
pub struct BridgeConfig {
    /// The upstream and its transport (the command line gives a child process).
    pub upstream: UpstreamSpec,
    /// `--name`: the fallback server name.
    pub name: Option<String>,
    /// `--discover-timeout`: the time limit of `server/discover`, and, once more, of the
    /// editor's `initialize` passed through to a legacy server.
    pub discover_timeout: Duration,
    /// How the upstream is opened: `transport::open::open` (every transport) for the
    /// executable, `transport::open::open_in_process` for an embedded server.
    pub open_upstream: crate::transport::open::OpenUpstream,
    /// `--max-line-bytes`, on both sides.
    pub max_line_bytes: usize,
    /// The deepest nesting of `{`/`[` in an editor's line (the executable:
    /// [`crate::protocol::wire::jsonrpc::MAX_CLIENT_DEPTH`], 64 levels; an embedded server:
    /// `Limits::max_depth`); a deeper line gets -32600 `too_deep`.
    pub max_depth: usize,
    /// Time limits per method.
    pub timeouts: Timeouts,
    /// Requests in flight at most.
    pub max_in_flight: usize,
    /// The wait at each shutdown step.
    pub shutdown_grace: Duration,
    /// The waits and time limits of the listen stream.
    pub listen: ListenTimings,
    /// The sign-in of a URL upstream: the Supervisor starts the SignIn actor from it and makes
    /// it the HTTP transport's token provider (`None`: no sign-in).
    pub sign_in: Option<SignInSetupRef>,
    /// `--metrics-interval`: the metrics line at info this often (`None`: only at debug,
    /// while requests flow).
    pub metrics_interval: Option<Duration>,
    /// `--allow-tool`, `--deny-tool` and the same for prompts and resources: the items the
    /// editor does not see (`None`: no such option, and no work for it on any frame).
    pub item_filter: Option<Arc<ItemFilter>>,
    /// Who hears the era decision and the adaptations of results (`mcp-bridge doctor`;
    /// `None`: the bridge, which only logs them).
    pub observer: Option<crate::transport::observe::Observer>,
    /// Whether the upstream is a server in this process (the embedded bridge): there is no
    /// upstream server then, and the error messages of the bridge's table that name one say
    /// "the server" (`protocol::revisions::errors::in_process_error`).
    pub in_process: bool,
    /// The server's name in the gateway's configuration file, for a bridge that is one server
    /// of a gateway: its log lines and its sign-in lines name it (`None`: the only bridge of
    /// the process).
    pub member: Option<Arc<str>>,
}

/// The sign-in settings of [`BridgeConfig::sign_in`] (`crate::auth::setup::SignInSetup` with the
/// feature `auth`).
#[cfg(feature = "auth")]
pub type SignInSetupRef = crate::auth::setup::SignInSetup;
/// The sign-in settings of [`BridgeConfig::sign_in`]: without the feature `auth` there are
/// none, so the field is always `None`.
#[cfg(not(feature = "auth"))]
pub type SignInSetupRef = std::convert::Infallible;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_method_has_the_time_limit_of_the_table() {
        let t = Timeouts::default();
        assert_eq!(
            t.first_round(Forwarded::ToolsCall),
            Duration::from_secs(3600)
        );
        assert_eq!(
            t.first_round(Forwarded::PromptsGet),
            Duration::from_secs(120)
        );
        assert_eq!(
            t.first_round(Forwarded::ResourcesRead),
            Duration::from_secs(120)
        );
        for f in [
            Forwarded::ToolsList,
            Forwarded::PromptsList,
            Forwarded::ResourcesList,
            Forwarded::ResourcesTemplatesList,
            Forwarded::CompletionComplete,
        ] {
            assert_eq!(t.first_round(f), Duration::from_secs(120), "{f:?}");
        }
    }
}
