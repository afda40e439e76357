//! `mcp-bridge doctor [--json] [--sign-in] [OPTIONS] <command...|URL>`: what an editor will
//! see of a server through the bridge, in one command.
//!
//! Doctor runs the bridge itself, not a client of its own: the Supervisor, the Frontend, the
//! Upstream and its transport (`supervisor::start_with`), with the bridge's options, in front
//! of a 2025-11-25 editor in this process (`editor.rs`). The era decision and the adaptations
//! of the bridge's rules reach doctor over the bridge's observation channel
//! ([`crate::transport::observe`]); what the editor gets is read from the editor's side. For a
//! URL, the first bridge signs in nowhere: its token provider hears the server's challenge
//! ([`sign_in::listening`]), and the sign-in's own discovery finds the metadata. With
//! `--sign-in`, a second bridge then signs in as `mcp-bridge` does and is examined instead.
//!
//! Files: `args.rs` (the command line), `editor.rs` (the in-process editor), `gateway.rs`
//! (`--config`: every server of a configuration file, and the names behind one bridge),
//! `report.rs` (the findings, the verdict, text and JSON), `sign_in.rs` (the sign-in found
//! without signing in), `snippets.rs` (the editors' configuration).

use serde_json::{Value, json};
use std::ffi::OsString;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub mod args;
mod editor;
pub mod gateway;
pub mod report;
pub mod sign_in;
pub mod snippets;

use self::args::{DoctorArgs, DoctorParsed};
use self::editor::{Editor, EditorAnswer};
use self::report::{ListSeen, Report};
use self::sign_in::Heard;
use crate::actors::config::BridgeConfig;
use crate::actors::supervisor::{StartSignIn, watchdog_after};
use crate::auth::opener::EnvSecrets;
use crate::cli::{Cli, EXIT_USAGE};
use crate::protocol::revisions::methods;
use crate::protocol::revisions::note::Note;
use crate::protocol::rules::item_filter;
use crate::protocol::rules::list_items::{self, ItemKind};
use crate::transport::children::ChildRegistry;
use crate::transport::observe::{Decided, Observed, Observer};
use crate::transport::open::UpstreamSpec;
use crate::transport::{isolation, program};

/// Exit code: the server is usable through the bridge.
pub const EXIT_USABLE: i32 = 0;
/// Exit code: it is not (the reason is the last line).
pub const EXIT_NOT_USABLE: i32 = 1;

/// Most pages doctor reads of one list: a server whose cursors never end is reported with
/// what these pages held, not followed for ever.
pub const MAX_LIST_PAGES: usize = 1000;

/// How much longer than the bridge's own time limit doctor waits for an answer of the bridge
/// (which answers at its limit with a `timeout` error): only a bridge that failed to answer
/// at all meets it.
pub const ANSWER_MARGIN: Duration = Duration::from_secs(5);

/// The client name of doctor's editor in `initialize`.
pub const CLIENT_NAME: &str = "mcp-bridge-doctor";

/// The lists, each with the capability that offers it.
const LISTS: [(ItemKind, &str, &str); 4] = [
    (ItemKind::Tool, methods::TOOLS_LIST, "tools"),
    (ItemKind::Prompt, methods::PROMPTS_LIST, "prompts"),
    (ItemKind::Resource, methods::RESOURCES_LIST, "resources"),
    (
        ItemKind::ResourceTemplate,
        methods::RESOURCES_TEMPLATES_LIST,
        "resources",
    ),
];

/// Runs `doctor` with `args` (the program name first, then `doctor`); gives the exit code.
/// `secrets` are the sign-in's variables, read (and removed from the environment) at start.
/// Call from `main` before any other thread exists.
pub fn run(args: impl IntoIterator<Item = OsString>, secrets: &EnvSecrets) -> i32 {
    let d = match args::parse(args.into_iter().skip(2).collect()) {
        DoctorParsed::Run(d) => d,
        DoctorParsed::RunConfig(c) => return gateway::run(&c, secrets),
        DoctorParsed::Print(text) => {
            let _ = std::io::stdout().write_all(text.as_bytes());
            return 0;
        }
        DoctorParsed::Usage(text) => {
            let _ = std::io::stderr().write_all(text.as_bytes());
            return EXIT_USAGE;
        }
    };
    // SAFETY: called from main before any other thread exists (as main does it for the
    // bridge): the `--header-env` variables leave the environment, so a browser never
    // inherits them.
    unsafe { crate::auth::opener::scrub_vars(&d.cli.header_env_vars()) };
    let _ = isolation::become_subreaper();
    // The children of doctor's bridges: a panic reaches each of them.
    let children = ChildRegistry::new();
    crate::app::process::stop_children_at_panic(children.clone(), "doctor", EXIT_NOT_USABLE);
    let level = if d.log_level_given {
        d.cli.log_level.filter()
    } else {
        tracing::level_filters::LevelFilter::WARN
    };
    crate::log::init(level);
    let signed = if d.sign_in {
        let mut config = d.cli.config();
        if let Err(cause) = crate::app::sign_in::sign_in(&mut config, &d.cli.sign_in, secrets) {
            crate::log::raw_line("cli", "error", &cause.to_string());
            crate::log::flush(crate::log::STDERR_EXIT_FLUSH);
            return EXIT_USAGE;
        }
        Some(config)
    } else {
        None
    };
    let system = actix::System::new();
    let mut report = system.block_on(examine(&d.cli, signed, secrets, &children));
    isolation::stop_descendants();
    // Entries to paste are offered for a server that works through the bridge only: an
    // entry for one that does not would put a broken server into the editor.
    if report.verdict().0 {
        report.snippets = editor_snippets(&d, &report);
    }
    report.warnings = d.cli.warnings.clone();
    conclude(
        d.json,
        || report.to_json(),
        || report.to_text(),
        report.verdict().0,
    )
}

/// The end of a run of doctor (one server or a configuration file): prints what it found on
/// stdout, as one JSON object when `json` and else as text, flushes the log, and gives the
/// exit code of the verdict (`usable`).
fn conclude(
    json: bool,
    to_json: impl FnOnce() -> Value,
    to_text: impl FnOnce() -> String,
    usable: bool,
) -> i32 {
    let text = if json {
        let mut t = serde_json::to_string_pretty(&to_json()).unwrap_or_default();
        t.push('\n');
        t
    } else {
        to_text()
    };
    let _ = std::io::stdout().write_all(text.as_bytes());
    crate::log::flush(crate::log::STDERR_EXIT_FLUSH);
    if usable { EXIT_USABLE } else { EXIT_NOT_USABLE }
}

/// Examines the server of the command line `cli`: a bridge without sign-in first; for a URL
/// that asks for a sign-in, the sign-in's metadata, and with `--sign-in` (`signed`: its
/// configuration) a second bridge that signs in. The servers it starts join `children`.
async fn examine(
    cli: &Cli,
    signed: Option<BridgeConfig>,
    secrets: &EnvSecrets,
    children: &Arc<ChildRegistry>,
) -> Report {
    let mut config = cli.config();
    let mut heard = None;
    if let UpstreamSpec::Http(spec) = &mut config.upstream {
        let (source, rx) = sign_in::listening();
        spec.tokens = source;
        heard = Some(rx);
    }
    let mut report = session(config, None, children).await;
    let challenge: Option<Heard> = heard.and_then(|mut rx| rx.try_recv().ok());
    let plain = cli.config();
    // A challenge to `server/discover` or to a later request (a server that lists its tools
    // only to a signed-in client).
    if let (Some(heard), UpstreamSpec::Http(spec)) = (challenge, &plain.upstream) {
        let mut found = sign_in::discover(
            &spec.url,
            &cli.sign_in,
            secrets,
            spec.ca_pem.clone(),
            &heard,
        )
        .await;
        // A static Authorization header turns the bridge's sign-in off (`app::sign_in`): the
        // server refused it, and the bridge would not sign in.
        if spec
            .headers
            .iter()
            .any(|(n, _)| n == reqwest::header::AUTHORIZATION)
        {
            found.bridge_uses = Err(sign_in::NoRegistration::StaticAuthorization);
        }
        if let Some(config) = signed.filter(|_| found.possible()) {
            let mut second =
                session(config, Some(crate::app::sign_in::sign_in_actor()), children).await;
            found.signed_in = Some(second.initialize.is_some());
            second.sign_in = Some(found);
            report = second;
        } else {
            report.sign_in = Some(found);
        }
    }
    report
}

/// One bridge with `config` in front of doctor's editor: `initialize`, `initialized`, every
/// page of each list its capabilities offer, then the end of the editor's input. A child
/// server joins `children`.
async fn session(
    mut config: BridgeConfig,
    sign_in: Option<StartSignIn>,
    children: &Arc<ChildRegistry>,
) -> Report {
    let (observer, mut observed) = Observer::channel();
    config.observer = Some(observer.clone());
    let http = config.upstream.is_http();
    if let UpstreamSpec::Http(spec) = &mut config.upstream {
        spec.observer = Some(observer);
    }
    let sign_in_allowance = config
        .sign_in
        .as_ref()
        .map(|s| s.config.sign_in_timeout)
        .unwrap_or_default();
    // The probe and a passed-through `initialize` each have --discover-timeout, and a sign-in
    // meanwhile has its own allowance.
    let initialize_limit = config.discover_timeout * 2 + sign_in_allowance + ANSWER_MARGIN;
    let list_limit = config.timeouts.list + ANSWER_MARGIN;
    let shutdown_limit = watchdog_after(config.shutdown_grace);
    let mut report = Report {
        target: if http { "url" } else { "command" },
        http,
        ..Report::default()
    };
    let mut editor = Editor::start(config, sign_in, children.clone());
    let started = Instant::now();
    let answer = editor
        .request(
            methods::INITIALIZE,
            json!({
                "protocolVersion": crate::protocol::revisions::legacy::PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
            }),
            initialize_limit,
        )
        .await;
    report.initialize_ms = Some(ms(started.elapsed()));
    let mut notes = Vec::new();
    while let Ok(o) = observed.try_recv() {
        take(&mut report, &mut notes, o);
    }
    match answer {
        Some(EditorAnswer::Result(result)) => {
            editor.notify(methods::INITIALIZED, json!({})).await;
            let passthrough = matches!(report.decided, Some(Decided::Legacy { .. }));
            let caps = result.get("capabilities").cloned().unwrap_or(Value::Null);
            report.initialize = Some(result);
            for (kind, method, capability) in LISTS {
                if caps.get(capability).is_none() {
                    continue;
                }
                let seen = read_list(&mut editor, kind, method, passthrough, list_limit).await;
                if report.list_ms.is_none()
                    && let Some(first) = seen.1
                {
                    report.list_ms = Some((method.to_owned(), first));
                }
                report.lists.push(seen.0);
            }
        }
        Some(EditorAnswer::Error(e)) => report.initialize_error = Some(error_text(&e)),
        None => {
            report.initialize_error = Some(format!(
                "no answer within {} s",
                initialize_limit.as_secs_f64()
            ));
        }
    }
    let _ = editor.close(shutdown_limit).await;
    while let Ok(o) = observed.try_recv() {
        take(&mut report, &mut notes, o);
    }
    report.changes = report::changes(&notes);
    report
}

/// Puts one observation into the report (the notes into `notes_of`, for [`report::changes`]).
fn take(report: &mut Report, notes_of: &mut Vec<(String, Note)>, observed: Observed) {
    match observed {
        Observed::Era { decided, elapsed } => {
            report.discover_ms = Some(ms(elapsed));
            report.decided = Some(decided);
        }
        Observed::FailedToStart { error } => {
            report.decided = Some(Decided::FailedToStart { error });
        }
        Observed::Notes { method, notes } => {
            notes_of.extend(notes.into_iter().map(|n| (method.clone(), n)));
        }
    }
}

/// Reads every page of one list; the time of its first page.
async fn read_list(
    editor: &mut Editor,
    kind: ItemKind,
    method: &'static str,
    passthrough: bool,
    limit: Duration,
) -> (ListSeen, Option<f64>) {
    let mut seen = ListSeen {
        kind,
        method,
        count: 0,
        pages: 0,
        error: None,
        refused: Vec::new(),
        keys: Vec::new(),
    };
    let mut first = None;
    let mut cursor: Option<String> = None;
    while seen.pages < MAX_LIST_PAGES {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let started = Instant::now();
        let answer = editor.request(method, params, limit).await;
        first.get_or_insert(ms(started.elapsed()));
        seen.pages += 1;
        let result = match answer {
            Some(EditorAnswer::Result(r)) => r,
            Some(EditorAnswer::Error(e)) => {
                seen.error = Some(error_text(&e));
                break;
            }
            None => {
                seen.error = Some(format!("no answer within {} s", limit.as_secs_f64()));
                break;
            }
        };
        let items = result
            .get(kind.member())
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for item in items {
            // A 2025-11-25 server's list reaches the editor as it came: each item the editor's
            // schema refuses is named (the bridge translates and checks a 2026-07-28 one).
            if passthrough && let Err(reason) = kind.check(item) {
                let label = list_items::item_label(item, seen.count);
                seen.refused
                    .push(format!("{} {label}: {reason}", kind.noun()));
            }
            if let Some(key) = item
                .get(item_filter::key_member(kind))
                .and_then(Value::as_str)
            {
                seen.keys.push(key.to_owned());
            }
            seen.count += 1;
        }
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    (seen, first)
}

/// The bridge's error as text: its message, its `data.cause` and `data.detail`.
fn error_text(e: &Value) -> String {
    let message = e.get("message").and_then(Value::as_str).unwrap_or("error");
    let code = e.get("code").and_then(Value::as_i64).unwrap_or(0);
    let data = e.get("data");
    let cause = data.and_then(|d| d.get("cause")).and_then(Value::as_str);
    let detail = data.and_then(|d| d.get("detail")).map(|d| match d {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    let mut text = format!("{code} {message}");
    if let Some(c) = cause {
        text.push_str(&format!(" ({c})"));
    }
    if let Some(d) = detail {
        text.push_str(&format!(": {d}"));
    }
    text
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The editors' configuration for the server: named `--name`, else the server's name, else
/// the command's file name (or the URL's host).
fn editor_snippets(d: &DoctorArgs, report: &Report) -> Vec<snippets::Snippet> {
    let config = d.cli.config();
    let name = d
        .cli
        .name
        .clone()
        .or_else(|| {
            report
                .initialize
                .as_ref()
                .and_then(|r| r.pointer("/serverInfo/name"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .or_else(|| config.upstream.fallback_name())
        .unwrap_or_else(|| "server".into());
    let exe = std::env::current_exe().unwrap_or_else(|_| "mcp-bridge".into());
    let (start, resolved) = match &config.upstream {
        UpstreamSpec::Child { command, .. } => (
            Some(d.bridge_args.len().saturating_sub(d.cli.command.len())),
            program::resolve(command, std::env::var_os("PATH").as_deref())
                .ok()
                .and_then(|p| std::path::absolute(p).ok()),
        ),
        _ => (None, None),
    };
    let cwd = std::env::current_dir().ok();
    let (command, args) = snippets::entry(
        &exe,
        &d.bridge_args,
        start,
        resolved.as_deref(),
        cwd.as_deref(),
    );
    snippets::snippets(&name, &command, &args)
}
