//! The bridge's options of one server, under the key `"mcp-bridge"` of its entry: `enabled`,
//! `prefix`, and the command line's own options for one server (time limits, filters, the
//! sign-in of a URL) under their names in camelCase (`--call-timeout` is `callTimeout`). Each
//! option goes through the command line's own parser, so its values, its checks and its
//! defaults are exactly those of `mcp-bridge`. A key that is none of them is an error: a typo
//! must not be silent.

use clap::Parser;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use jsonc_parser::ast::{ObjectProp, Value};
use std::ffi::OsString;
use std::sync::Arc;

use super::{Problem, Reader, member, value_start};
use crate::cli::Cli;
use crate::cli::sign_in::authorize_param;
use crate::protocol::rules::item_filter::check_glob;

/// What a value of an option is in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A number of seconds.
    Seconds,
    /// A whole number.
    Number,
    /// A string.
    Text,
    /// `true` gives the flag; `false` leaves it out.
    Flag,
    /// An array of globs, one option each.
    Globs,
    /// An object of `NAME: VALUE`, one `NAME=VALUE` option each.
    Params,
}

/// The options: the key in the file, the command line's option, the kind of value.
const OPTIONS: [(&str, &str, Kind); 25] = [
    ("discoverTimeout", "--discover-timeout", Kind::Seconds),
    ("listTimeout", "--list-timeout", Kind::Seconds),
    ("readTimeout", "--read-timeout", Kind::Seconds),
    ("callTimeout", "--call-timeout", Kind::Seconds),
    ("inputTimeout", "--input-timeout", Kind::Seconds),
    ("shutdownGrace", "--shutdown-grace", Kind::Seconds),
    ("listenAckTimeout", "--listen-ack-timeout", Kind::Seconds),
    ("allowTool", "--allow-tool", Kind::Globs),
    ("denyTool", "--deny-tool", Kind::Globs),
    ("allowPrompt", "--allow-prompt", Kind::Globs),
    ("denyPrompt", "--deny-prompt", Kind::Globs),
    ("allowResource", "--allow-resource", Kind::Globs),
    ("denyResource", "--deny-resource", Kind::Globs),
    ("clientId", "--client-id", Kind::Text),
    ("clientIssuer", "--client-issuer", Kind::Text),
    ("clientMetadataUrl", "--client-metadata-url", Kind::Text),
    ("grant", "--grant", Kind::Text),
    ("signIn", "--sign-in", Kind::Text),
    ("redirectPort", "--redirect-port", Kind::Number),
    ("account", "--account", Kind::Text),
    ("tokenStore", "--token-store", Kind::Text),
    ("tokenKeyFile", "--token-key-file", Kind::Text),
    ("noBrowser", "--no-browser", Kind::Flag),
    ("signInTimeout", "--sign-in-timeout", Kind::Seconds),
    ("authorizeParam", "--authorize-param", Kind::Params),
];

/// The keys of the options, for the error of an unknown one.
pub(super) fn names() -> String {
    let mut keys = vec!["enabled", "prefix"];
    keys.extend(OPTIONS.iter().map(|(key, _, _)| *key));
    keys.join(", ")
}

/// A server's options.
pub(super) struct Options {
    /// `enabled` (default true).
    pub enabled: bool,
    /// `prefix`: its value, where it is and its member.
    pub prefix: Option<(String, usize, String)>,
    /// The command line with the options (its command still empty).
    pub cli: Box<Cli>,
    /// Where the options are (the entry when it has none), for the errors of the options
    /// together.
    pub at: usize,
    /// Their member (`servers.NAME.mcp-bridge`).
    pub member: String,
}

/// Reads the options `prop` of the entry `entry` (at `entry_at`), if it has them. Errors: a
/// value of the wrong type or that the command line refuses, an unknown key.
pub(super) fn read(
    r: &mut Reader<'_, '_>,
    entry: &str,
    entry_at: usize,
    prop: Option<&ObjectProp<'_>>,
) -> Result<Options, super::ConfigError> {
    let path = member(entry, super::BRIDGE_KEY);
    let mut options = Options {
        enabled: true,
        prefix: None,
        cli: Box::new(Cli::parse_from(["mcp-bridge", "--", "-"])),
        at: prop.map_or(entry_at, |p| p.range.start),
        member: path.clone(),
    };
    let Some(prop) = prop else {
        options.cli.command.clear();
        return Ok(options);
    };
    let mut argv: Vec<OsString> = vec!["mcp-bridge".into()];
    // Where each command-line option came from, for its errors.
    let mut placed: Vec<(&str, usize, String)> = Vec::new();
    for (key, p) in r.object(&prop.value, &path, "an object of options")? {
        let m = member(&path, &key);
        let at = value_start(&p.value);
        match key.as_str() {
            "enabled" => match &p.value {
                Value::BooleanLit(b) => options.enabled = b.value,
                _ => return Err(r.error(at, &m, Problem::Expected("true or false"))),
            },
            "prefix" => {
                let prefix = r.string(&p.value, &m)?;
                options.prefix = Some((prefix, at, m));
            }
            _ => {
                let Some(&(_, flag, kind)) = OPTIONS.iter().find(|(k, _, _)| *k == key) else {
                    let shown = crate::protocol::wire::excerpt::sanitize(&key);
                    return Err(r.error(p.range.start, &m, Problem::UnknownOption(shown)));
                };
                placed.push((flag, at, m.clone()));
                option(r, &mut argv, flag, kind, &p.value, &m)?;
            }
        }
    }
    argv.extend(["--".into(), "-".into()]);
    let mut cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            let flag = e
                .get(ContextKind::InvalidArg)
                .map(|a| a.to_string())
                .unwrap_or_default();
            let flag = flag.split_whitespace().next().unwrap_or_default();
            let (at, m) = placed
                .iter()
                .find(|(f, _, _)| *f == flag)
                .map_or((options.at, path.clone()), |(_, at, m)| (*at, m.clone()));
            return Err(r.error(at, &m, Problem::OptionValue(cause(&e))));
        }
    };
    cli.command.clear();
    let filter = cli.filter.filter().map_err(|e| {
        r.error(
            options.at,
            &path,
            Problem::OptionValue(e.reason.to_string()),
        )
    })?;
    cli.item_filter = filter.map(Arc::new);
    options.cli = Box::new(cli);
    Ok(options)
}

/// Puts the option `flag` of the value `value` (of kind `kind`) on `argv`, as `flag=VALUE`
/// (a value may start with `-`). Errors: a value of the wrong type, a glob or a parameter that
/// the command line refuses (at its element).
fn option(
    r: &mut Reader<'_, '_>,
    argv: &mut Vec<OsString>,
    flag: &str,
    kind: Kind,
    value: &Value<'_>,
    m: &str,
) -> Result<(), super::ConfigError> {
    let at = value_start(value);
    let expected = |what| r.error(at, m, Problem::Expected(what));
    match (kind, value) {
        (Kind::Seconds | Kind::Number, Value::NumberLit(n)) => {
            argv.push(format!("{flag}={}", n.value).into());
        }
        (Kind::Seconds, _) => return Err(expected("a number of seconds")),
        (Kind::Number, _) => return Err(expected("a number")),
        (Kind::Flag, Value::BooleanLit(b)) => {
            if b.value {
                argv.push(flag.into());
            }
        }
        (Kind::Flag, _) => return Err(expected("true or false")),
        (Kind::Text, _) => {
            let text = r.string(value, m)?;
            argv.push(format!("{flag}={text}").into());
        }
        (Kind::Globs, Value::Array(a)) => {
            for (i, element) in a.elements.iter().enumerate() {
                let em = format!("{m}[{i}]");
                let glob = r.string(element, &em)?;
                check_glob(&glob).map_err(|e| {
                    r.error(
                        value_start(element),
                        &em,
                        Problem::OptionValue(e.to_string()),
                    )
                })?;
                argv.push(format!("{flag}={glob}").into());
            }
        }
        (Kind::Globs, _) => return Err(expected("an array of globs")),
        (Kind::Params, Value::Object(o)) => {
            for (name, p) in super::jsonc::members(&o.properties) {
                let pm = member(m, &name);
                let text = r.string(&p.value, &pm)?;
                let param = format!("{name}={text}");
                authorize_param(&param).map_err(|e| {
                    r.error(p.range.start, &pm, Problem::OptionValue(e.to_string()))
                })?;
                argv.push(format!("{flag}={param}").into());
            }
        }
        (Kind::Params, _) => return Err(expected("an object of parameters")),
    }
    Ok(())
}

/// What the command line's parser says is wrong with a value, without the option's name (the
/// member names it) and without the value (the position shows it): the value parser's own
/// words (`expected seconds, at least 0.1 and at most 2592000`), or the values it takes.
fn cause(e: &clap::Error) -> String {
    if let Some(source) = std::error::Error::source(e) {
        return crate::protocol::wire::excerpt::sanitize(&source.to_string());
    }
    match (e.kind(), e.get(ContextKind::ValidValue)) {
        (ErrorKind::InvalidValue, Some(ContextValue::Strings(values))) => {
            format!("expected {}", values.join(", "))
        }
        _ => super::super::clap_cause(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_is_one_of_the_command_line() {
        let cli = <Cli as clap::CommandFactory>::command();
        for (key, flag, _) in OPTIONS {
            let long = flag.trim_start_matches("--");
            assert!(
                cli.get_arguments().any(|a| a.get_long() == Some(long)),
                "{key}: {flag}"
            );
            // camelCase of the option's name.
            let camel: String = long
                .split('-')
                .enumerate()
                .map(|(i, w)| match i {
                    0 => w.to_owned(),
                    _ => w[..1].to_uppercase() + &w[1..],
                })
                .collect();
            assert_eq!(key, camel, "{flag}");
        }
    }
}
