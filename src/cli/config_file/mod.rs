//! The configuration file of many servers behind one bridge, read as the editors write it:
//! Claude Desktop's and Cursor's `{"mcpServers": {NAME: {command, args, env, cwd} or {url,
//! headers}}}` and VS Code's `mcp.json` `{"servers": {NAME: {type, command, args, env, cwd, url,
//! headers}}}` (JSON with comments and trailing commas). The bridge's own options of a server
//! are in its entry under the key `"mcp-bridge"`, which editors ignore, so the same file still
//! works in the editor (`options`). `${env:NAME}` is resolved in every string
//! ([`variables`]).
//!
//! Each server becomes the command line the bridge would have for it alone (a [`Cli`]), so that
//! it is started or reached, filtered and timed exactly as `mcp-bridge` does it. A file that
//! cannot be used is a [`ConfigError`]: `FILE:LINE:COLUMN: MEMBER: what is wrong`, exit 2.
//! Members that are neither the editors' nor the bridge's are ignored, as editors do.

pub mod jsonc;
mod options;
pub mod variables;

use jsonc_parser::ast::{ObjectProp, Value};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use self::jsonc::Position;
use self::variables::VariableError;
use super::Cli;
use super::sign_in::SignInOptionsError;
use super::url_form::{UrlError, check_url};
use crate::auth::opener::EnvSecrets;
use crate::log::files::CannotRead;
use crate::protocol::rules::names::{self, ClashKind, NameError, NameTable, Namespace};
use crate::transport::child::ChildEnv;
use crate::transport::http::HttpSpec;
use crate::transport::http::client::ProxyEnv;
use crate::transport::http::headers::{HeaderError, check_user_header};

/// The key of the bridge's options in a server's entry.
pub const BRIDGE_KEY: &str = "mcp-bridge";

/// The largest configuration file read, in bytes: editors' files of hundreds of servers are
/// tens of kilobytes.
pub const MAX_CONFIG_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The option that names the file (in its errors when it cannot be read).
pub const CONFIG_OPTION: &str = "--config";

/// What is wrong with the file: the text after `FILE:LINE:COLUMN: MEMBER: `.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// The option, the path and the OS's words.
    #[error(transparent)]
    Unreadable(CannotRead),
    #[error("is over {MAX_CONFIG_FILE_BYTES} bytes")]
    TooLarge,
    #[error("is not UTF-8 text")]
    NotUtf8,
    /// The parser's words.
    #[error("invalid JSON: {0}")]
    Syntax(String),
    /// A member of the wrong JSON type: what it must be.
    #[error("expected {0}")]
    Expected(&'static str),
    #[error(
        "no \"mcpServers\" (Claude Desktop, Cursor) or \"servers\" (VS Code) member: the file names no server"
    )]
    NoServerList,
    #[error("both \"servers\" and \"mcpServers\": a file has one of them")]
    BothServerLists,
    #[error("no server")]
    NoServer,
    /// A `type` other than the transports the bridge speaks: the type, sanitized.
    #[error("unknown type \"{0}\": expected \"stdio\", \"http\" or \"streamable-http\"")]
    UnknownType(String),
    #[error(
        "type \"sse\" (the HTTP+SSE transport of MCP 2024-11-05) is not one mcp-bridge speaks: give the server's Streamable HTTP URL with type \"http\""
    )]
    SseType,
    #[error("both command and url: a server is either started (command) or reached at a URL (url)")]
    CommandAndUrl,
    #[error(
        "neither command nor url: a server is either started (command) or reached at a URL (url)"
    )]
    NoCommandOrUrl,
    /// The type and the member that it cannot have.
    #[error("type \"{kind}\" takes {needs}, not {other}")]
    TypeMismatch {
        kind: String,
        needs: &'static str,
        other: &'static str,
    },
    #[error(
        "mcp-bridge does not read env files: give the variables in \"env\" (${{env:NAME}} takes one from the environment)"
    )]
    EnvFile,
    #[error("is empty: it names the program that starts the server")]
    EmptyCommand,
    /// The folder, sanitized.
    #[error("\"{0}\" is not a folder: the server's program starts in its cwd")]
    NoFolder(String),
    #[error(transparent)]
    Name(#[from] NameError),
    /// The server whose name makes the same resource URIs, and their token.
    #[error(
        "the name makes the same resource URIs ({token}+...) as the server {other}: rename one of them"
    )]
    SameUris { other: String, token: String },
    /// The server whose tools and prompts get the same prefix, and the prefix.
    #[error(
        "its tools and prompts would get the same names ({prefix}...) as those of the server {other}: give one of them another \"prefix\""
    )]
    SamePrefix { other: String, prefix: String },
    #[error(transparent)]
    Variable(#[from] VariableError),
    /// A key in the bridge's options that is none of them: a typo must not be silent.
    #[error("unknown option \"{0}\" (the options: {list})", list = options::names())]
    UnknownOption(String),
    /// An option's value that the bridge's own parser refuses, in its words.
    #[error("invalid value: {0}")]
    OptionValue(String),
    #[error("the sign-in options apply only to a server at a URL")]
    SignInForCommand,
    #[error(transparent)]
    SignIn(#[from] SignInOptionsError),
    #[error(transparent)]
    Url(#[from] UrlError),
    #[error(transparent)]
    Header(#[from] HeaderError),
    #[error("the value of the header is not valid header text")]
    HeaderValue,
}

/// A file that cannot be used: where, the member, and what is wrong. Its text is
/// `FILE:LINE:COLUMN: MEMBER: PROBLEM` (`FILE: PROBLEM` when the file cannot be read).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.text())]
pub struct ConfigError {
    /// The file, as given (control characters as spaces).
    pub file: String,
    /// Where in it (`None`: the file itself).
    pub at: Option<Position>,
    /// The member, `servers.NAME.type` (empty: the whole file).
    pub member: String,
    /// What is wrong.
    pub problem: Box<Problem>,
}

impl ConfigError {
    fn text(&self) -> String {
        if let Problem::Unreadable(e) = self.problem.as_ref() {
            return e.to_string();
        }
        let mut text = self.file.clone();
        if let Some(at) = self.at {
            text.push_str(&format!(":{}:{}", at.line, at.column));
        }
        if !self.member.is_empty() {
            text.push_str(&format!(": {}", self.member));
        }
        format!("{text}: {}", self.problem)
    }
}

/// One server of the file.
#[derive(Debug)]
pub struct ServerEntry {
    /// Its name: the key of its entry.
    pub name: String,
    /// Its member (`servers.NAME`).
    pub member: String,
    /// Where its entry starts.
    pub at: Position,
    /// `"enabled"` of its options (default true): a server that is not enabled is read, and
    /// then left alone.
    pub enabled: bool,
    /// The names its items get (`None` for a server that is not enabled).
    pub namespace: Option<Namespace>,
    /// The command line the bridge would have for this server alone.
    pub cli: Box<Cli>,
    /// The text of its entry with its variables resolved: two readings of the file with the
    /// same fingerprint for a server give it the same bridge.
    pub fingerprint: String,
}

/// The servers of a file, in its order.
#[derive(Debug)]
pub struct GatewayConfig {
    /// The file, as given.
    pub file: String,
    /// Its servers.
    pub servers: Vec<ServerEntry>,
    /// The environment variables whose values went into a header: they reach no child.
    pub secret_vars: Vec<String>,
}

impl GatewayConfig {
    /// The name table of the enabled servers, in their order (their names were checked when
    /// the file was read).
    pub fn name_table(&self) -> NameTable {
        let spaces = self.servers.iter().filter_map(|s| s.namespace.clone());
        NameTable::new(spaces.collect()).unwrap_or_default()
    }
}

/// Reads the file at `path` (its proxy settings from the environment, as the URL form does).
/// `secrets` are the sign-in's variables, read at start. Errors: [`ConfigError`].
pub fn load(path: &Path, secrets: &EnvSecrets) -> Result<GatewayConfig, ConfigError> {
    load_with(path, secrets, &mut |name: &str| std::env::var(name).ok())
}

/// [`load`] with the environment variables of `env` (`None`: not set): a reading after the
/// start resolves the variables as the first reading did, from the environment of then.
pub fn load_with(
    path: &Path,
    secrets: &EnvSecrets,
    env: &mut dyn FnMut(&str) -> Option<String>,
) -> Result<GatewayConfig, ConfigError> {
    let file = crate::protocol::wire::excerpt::sanitize(&path.display().to_string());
    let fail = |problem| ConfigError {
        file: file.clone(),
        at: None,
        member: String::new(),
        problem: Box::new(problem),
    };
    let bytes = std::fs::metadata(path)
        .and_then(|m| match m.len() > MAX_CONFIG_FILE_BYTES {
            true => Ok(None),
            false => std::fs::read(path).map(Some),
        })
        .map_err(|e| {
            fail(Problem::Unreadable(CannotRead::new(
                CONFIG_OPTION,
                path,
                &e,
            )))
        })?
        .ok_or_else(|| fail(Problem::TooLarge))?;
    let text = String::from_utf8(bytes).map_err(|_| fail(Problem::NotUtf8))?;
    let mut config = read(&file, &text, env, secrets)?;
    for server in &mut config.servers {
        if let Some(spec) = &mut server.cli.http {
            spec.proxy = ProxyEnv::from_env();
        }
    }
    Ok(config)
}

/// The member path of `key` in `parent`: `parent.key`, or `parent["key"]` for a key that is
/// not letters, digits, `_` and `-`.
fn member(parent: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (plain, parent.is_empty()) {
        (true, true) => key.to_owned(),
        (true, false) => format!("{parent}.{key}"),
        (false, _) => {
            let quoted = serde_json::to_string(key).unwrap_or_default();
            format!(
                "{parent}[{}]",
                crate::protocol::wire::excerpt::sanitize(&quoted)
            )
        }
    }
}

/// What one reading of a file shares: the text (for positions), the environment, and what it
/// found out on the way.
struct Reader<'t, 'e> {
    file: &'t str,
    text: &'t str,
    env: &'e mut dyn FnMut(&str) -> Option<String>,
    secrets: &'e EnvSecrets,
    /// A server that is not enabled: a variable it cannot resolve stays as written.
    lenient: bool,
    /// The variables of the last string read.
    used: Vec<String>,
}

impl Reader<'_, '_> {
    fn error(&self, offset: usize, member: &str, problem: Problem) -> ConfigError {
        ConfigError {
            file: self.file.to_owned(),
            at: Some(jsonc::position(self.text, offset)),
            member: member.to_owned(),
            problem: Box::new(problem),
        }
    }

    /// The string `value` with its variables resolved (the names used in `self.used`).
    /// Errors: not a string; a variable that cannot be resolved.
    fn string(&mut self, value: &Value<'_>, member: &str) -> Result<String, ConfigError> {
        let Value::StringLit(s) = value else {
            return Err(self.error(value_start(value), member, Problem::Expected("a string")));
        };
        self.used.clear();
        let (env, used) = (&mut self.env, &mut self.used);
        let mut recorded = |name: &str| {
            used.push(name.to_owned());
            env(name)
        };
        match variables::expand(&s.value, &mut recorded) {
            Ok(text) => Ok(text),
            Err(_) if self.lenient => Ok(s.value.to_string()),
            Err(e) => Err(self.error(s.range.start, member, e.into())),
        }
    }

    /// The members of the object `value`. Errors: not an object (`what` says what it holds).
    fn object<'v, 'a>(
        &self,
        value: &'v Value<'a>,
        member: &str,
        what: &'static str,
    ) -> Result<Vec<(String, &'v ObjectProp<'a>)>, ConfigError> {
        match value {
            Value::Object(o) => Ok(jsonc::members(&o.properties)),
            other => Err(self.error(value_start(other), member, Problem::Expected(what))),
        }
    }
}

/// Where a value starts.
fn value_start(value: &Value<'_>) -> usize {
    match value {
        Value::StringLit(v) => v.range.start,
        Value::NumberLit(v) => v.range.start,
        Value::BooleanLit(v) => v.range.start,
        Value::Object(v) => v.range.start,
        Value::Array(v) => v.range.start,
        Value::NullKeyword(v) => v.range.start,
    }
}

/// Reads the text of a file (`file` names it in errors); `env` gives an environment
/// variable's value, `secrets` are the sign-in's variables. Errors: [`ConfigError`].
pub fn read(
    file: &str,
    text: &str,
    env: &mut dyn FnMut(&str) -> Option<String>,
    secrets: &EnvSecrets,
) -> Result<GatewayConfig, ConfigError> {
    // A byte order mark is no character of the text an editor shows.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut r = Reader {
        file,
        text,
        env,
        secrets,
        lenient: false,
        used: Vec::new(),
    };
    let root = match jsonc::parse(text) {
        Ok(Some(root)) => root,
        Ok(None) => return Err(r.error(text.len(), "", Problem::Expected("an object"))),
        Err(e) => {
            return Err(ConfigError {
                file: file.to_owned(),
                at: Some(e.at),
                member: String::new(),
                problem: Box::new(Problem::Syntax(e.message)),
            });
        }
    };
    let top = r.object(&root, "", "an object")?;
    let lists: Vec<&(String, &ObjectProp<'_>)> = top
        .iter()
        .filter(|(k, _)| k == "servers" || k == "mcpServers")
        .collect();
    let (list_name, list) = match lists.as_slice() {
        [] => return Err(r.error(value_start(&root), "", Problem::NoServerList)),
        [one] => (one.0.as_str(), &one.1.value),
        [_, second, ..] => {
            return Err(r.error(second.1.range.start, &second.0, Problem::BothServerLists));
        }
    };
    let entries = r.object(list, list_name, "an object of servers")?;
    if entries.is_empty() {
        return Err(r.error(value_start(list), list_name, Problem::NoServer));
    }
    let mut servers = Vec::with_capacity(entries.len());
    let mut secret_vars = Vec::new();
    for (name, prop) in &entries {
        r.lenient = false;
        let (server, secrets_used) = entry(&mut r, list_name, name, prop)?;
        secret_vars.extend(secrets_used);
        servers.push(server);
    }
    // Two enabled servers whose resource URIs or tool names could not be told apart.
    let enabled: Vec<&ServerEntry> = servers.iter().filter(|s| s.enabled).collect();
    let spaces = enabled.iter().filter_map(|s| s.namespace.clone()).collect();
    if let Err(clash) = NameTable::new(spaces) {
        let (first, second) = (enabled[clash.first], enabled[clash.second]);
        let offset = entries
            .iter()
            .find(|(n, _)| *n == second.name)
            .map_or(0, |(_, p)| p.range.start);
        let other = first.name.clone();
        let problem = match clash.kind {
            ClashKind::UriToken => Problem::SameUris {
                other,
                token: clash.token,
            },
            ClashKind::Prefix => Problem::SamePrefix {
                other,
                prefix: clash.token,
            },
        };
        return Err(r.error(offset, &second.member, problem));
    }
    secret_vars.sort();
    secret_vars.dedup();
    Ok(GatewayConfig {
        file: file.to_owned(),
        servers,
        secret_vars,
    })
}

/// Reads one server's entry: the server, and the variables that went into its headers.
fn entry(
    r: &mut Reader<'_, '_>,
    list: &str,
    name: &str,
    prop: &ObjectProp<'_>,
) -> Result<(ServerEntry, Vec<String>), ConfigError> {
    let path = member(list, name);
    let at = prop.range.start;
    let fields = r.object(&prop.value, &path, "an object")?;
    let get = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, p)| *p);
    let options = options::read(r, &path, at, get(BRIDGE_KEY))?;
    r.lenient = !options.enabled;
    let mut cli = options.cli;
    if let Some(p) = get("envFile") {
        return Err(r.error(p.range.start, &member(&path, "envFile"), Problem::EnvFile));
    }
    let kind = match get("type") {
        None => None,
        Some(p) => {
            let m = member(&path, "type");
            let Value::StringLit(s) = &p.value else {
                return Err(r.error(value_start(&p.value), &m, Problem::Expected("a string")));
            };
            match s.value.as_ref() {
                "stdio" => Some((Reach::Stdio, p)),
                "http" | "streamable-http" => Some((Reach::Http, p)),
                "sse" => return Err(r.error(s.range.start, &m, Problem::SseType)),
                other => {
                    let shown = crate::protocol::wire::excerpt::sanitize(other);
                    return Err(r.error(s.range.start, &m, Problem::UnknownType(shown)));
                }
            }
        }
    };
    let (command, url) = (get("command"), get("url"));
    let transport = match (command, url) {
        (Some(_), Some(u)) => {
            return Err(r.error(u.range.start, &member(&path, "url"), Problem::CommandAndUrl));
        }
        (None, None) => return Err(r.error(at, &path, Problem::NoCommandOrUrl)),
        (Some(_), None) => Reach::Stdio,
        (None, Some(_)) => Reach::Http,
    };
    if let Some((declared, p)) = kind
        && declared != transport
    {
        let s = match &p.value {
            Value::StringLit(s) => s.value.to_string(),
            _ => String::new(),
        };
        let (needs, other) = match declared {
            Reach::Stdio => ("command", "url"),
            Reach::Http => ("url", "command"),
        };
        let problem = Problem::TypeMismatch {
            kind: s,
            needs,
            other,
        };
        return Err(r.error(value_start(&p.value), &member(&path, "type"), problem));
    }
    let mut secret_vars = Vec::new();
    match (command, url) {
        (Some(c), _) => {
            let program = r.string(&c.value, &member(&path, "command"))?;
            if program.is_empty() && !r.lenient {
                let at = value_start(&c.value);
                return Err(r.error(at, &member(&path, "command"), Problem::EmptyCommand));
            }
            cli.command = vec![OsString::from(program)];
            if let Some(p) = get("args") {
                let m = member(&path, "args");
                let Value::Array(a) = &p.value else {
                    let problem = Problem::Expected("an array of strings");
                    return Err(r.error(value_start(&p.value), &m, problem));
                };
                for (i, arg) in a.elements.iter().enumerate() {
                    let arg = r.string(arg, &format!("{m}[{i}]"))?;
                    cli.command.push(arg.into());
                }
            }
            let mut env = ChildEnv::default();
            if let Some(p) = get("env") {
                let m = member(&path, "env");
                for (var, value) in r.object(&p.value, &m, "an object of strings")? {
                    let vm = member(&m, &var);
                    let value = match &value.value {
                        Value::NullKeyword(_) => None,
                        Value::NumberLit(n) => Some(OsString::from(n.value)),
                        other => Some(OsString::from(r.string(other, &vm)?)),
                    };
                    env.vars.push((OsString::from(var), value));
                }
            }
            if let Some(p) = get("cwd") {
                let m = member(&path, "cwd");
                let cwd = PathBuf::from(r.string(&p.value, &m)?);
                // A start in a folder that is not there fails as if the program were missing
                // (ENOENT of the spawn): said here, where the folder is named.
                if !r.lenient && !cwd.is_dir() {
                    let shown =
                        crate::protocol::wire::excerpt::sanitize(&cwd.display().to_string());
                    return Err(r.error(value_start(&p.value), &m, Problem::NoFolder(shown)));
                }
                env.cwd = Some(cwd);
            }
            cli.child_env = env;
            if cli.sign_in.given() {
                return Err(r.error(options.at, &options.member, Problem::SignInForCommand));
            }
        }
        (None, Some(u)) => {
            let m = member(&path, "url");
            let text = r.string(&u.value, &m)?;
            let url = check_url(&text).map_err(|e| r.error(value_start(&u.value), &m, e.into()))?;
            let mut spec = HttpSpec::new(url);
            spec.max_response_bytes = cli.max_response_bytes as usize;
            if let Some(p) = get("headers") {
                let m = member(&path, "headers");
                for (header, value) in r.object(&p.value, &m, "an object of strings")? {
                    let hm = member(&m, &header);
                    let at = value.range.start;
                    let hname =
                        check_user_header(header.trim()).map_err(|e| r.error(at, &hm, e.into()))?;
                    let text = r.string(&value.value, &hm)?;
                    secret_vars.append(&mut r.used);
                    let mut hvalue =
                        reqwest::header::HeaderValue::from_str(text.trim()).map_err(|_| {
                            r.error(value_start(&value.value), &hm, Problem::HeaderValue)
                        })?;
                    hvalue.set_sensitive(true);
                    spec.headers.push((hname, hvalue));
                }
            }
            let authorization = spec
                .headers
                .iter()
                .any(|(n, _)| n == reqwest::header::AUTHORIZATION);
            cli.command = vec![OsString::from(text)];
            cli.http = Some(spec);
            if !authorization {
                // One MCP_BRIDGE_CLIENT_SECRET for the file: it is the secret of the servers
                // that name a clientId, and no concern of the others (their sign-in registers
                // its own client).
                let secrets = match cli.sign_in.client_id {
                    Some(_) => r.secrets.clone(),
                    None => EnvSecrets {
                        client_secret: None,
                        ..r.secrets.clone()
                    },
                };
                cli.sign_in
                    .check(&secrets)
                    .map_err(|e| r.error(options.at, &options.member, e.into()))?;
            }
        }
        (None, None) => return Err(r.error(at, &path, Problem::NoCommandOrUrl)),
    }
    let namespace = match options.enabled {
        false => None,
        true => Some(
            names::namespace(name, options.prefix.as_ref().map(|p| p.0.as_str())).map_err(|e| {
                match (&e, &options.prefix) {
                    (NameError::PrefixCharacters | NameError::PrefixTooLong, Some((_, at, m))) => {
                        r.error(*at, m, e.into())
                    }
                    _ => r.error(at, &path, e.into()),
                }
            })?,
        ),
    };
    // The entry's text with its variables resolved: what tells a changed entry from an
    // unchanged one when the file is read again.
    let text = r.text;
    let source = text
        .get(prop.range.start..prop.range.end)
        .unwrap_or_default();
    let env = &mut r.env;
    let fingerprint =
        variables::expand(source, &mut |n| env(n)).unwrap_or_else(|_| source.to_owned());
    let server = ServerEntry {
        name: name.to_owned(),
        member: path,
        at: jsonc::position(r.text, at),
        enabled: options.enabled,
        namespace,
        cli,
        fingerprint,
    };
    Ok((server, secret_vars))
}

/// How a server is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    /// A command, on stdio.
    Stdio,
    /// A URL, over Streamable HTTP.
    Http,
}

#[cfg(test)]
mod tests;
