//! `mcp-bridge doctor --config FILE`: every enabled server of an editor's configuration file
//! (`cli::config_file`), checked as `doctor` checks one server, one after the other in the
//! file's order; then the names their items get behind one bridge
//! (`protocol::rules::names`): each tool and prompt whose name is sanitized or shortened, each
//! resource the bridge cannot name, and each name that two items share, which fails.

use serde_json::{Map, Value, json};

use super::args::ConfigArgs;
use super::report::Report;
use super::{EXIT_NOT_USABLE, conclude};
use crate::auth::opener::EnvSecrets;
use crate::cli::EXIT_USAGE;
use crate::cli::config_file::{self, GatewayConfig, ServerEntry};
use crate::protocol::rules::list_items::ItemKind;
use crate::protocol::rules::names::{NameChange, NameRefused, NameTable};
use crate::transport::children::ChildRegistry;
use crate::transport::isolation;

/// An item whose exposed name is not plainly its server's prefix and its own name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Renamed {
    /// The server's index among the enabled ones.
    pub server: usize,
    /// Its kind (a tool or a prompt).
    pub kind: ItemKind,
    /// Its name upstream.
    pub original: String,
    /// Its name for the editor.
    pub exposed: String,
    /// How the two differ.
    pub change: NameChange,
}

/// A resource or template whose URI has no scheme: the bridge cannot tell its server from the
/// URI, and leaves it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unnamed {
    /// The server's index among the enabled ones.
    pub server: usize,
    /// Its kind.
    pub kind: ItemKind,
    /// Its URI (or URI template) upstream.
    pub original: String,
}

/// A name that two items share after namespacing: the editor could reach only one of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Collision {
    /// Their kind.
    pub kind: ItemKind,
    /// The name they share.
    pub exposed: String,
    /// The first item: its server's index and its own name.
    pub first: (usize, String),
    /// The second one.
    pub second: (usize, String),
}

/// The names of every server's items behind one bridge.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    /// The tools and prompts whose names are sanitized or shortened.
    pub renamed: Vec<Renamed>,
    /// The resources and templates without a scheme.
    pub unnamed: Vec<Unnamed>,
    /// The names two items share.
    pub collisions: Vec<Collision>,
}

/// The names of the items that the `reports` of the servers of `table` (in its order) list.
pub fn names(mut table: NameTable, reports: &[Report]) -> Names {
    let mut names = Names::default();
    for (server, report) in reports.iter().enumerate() {
        for list in &report.lists {
            for key in &list.keys {
                match table.insert(server, list.kind, key) {
                    Ok(e) if e.change == NameChange::None => {}
                    // A URI keeps its form whatever the case of its token: not a rename.
                    Ok(_)
                        if matches!(list.kind, ItemKind::Resource | ItemKind::ResourceTemplate) => {
                    }
                    Ok(e) => names.renamed.push(Renamed {
                        server,
                        kind: list.kind,
                        original: key.clone(),
                        exposed: e.name,
                        change: e.change,
                    }),
                    Err(NameRefused::NoScheme) => names.unnamed.push(Unnamed {
                        server,
                        kind: list.kind,
                        original: key.clone(),
                    }),
                    Err(NameRefused::Clash { exposed, first }) => {
                        names.collisions.push(Collision {
                            kind: list.kind,
                            exposed,
                            first: (first.server, first.original),
                            second: (server, key.clone()),
                        })
                    }
                }
            }
        }
    }
    names
}

/// What doctor found in a file: the report of each enabled server, and the names.
pub struct Checked<'c> {
    config: &'c GatewayConfig,
    /// The enabled servers, in the file's order.
    enabled: Vec<&'c ServerEntry>,
    /// Their reports, in the same order.
    reports: Vec<Report>,
    names: Names,
}

impl<'c> Checked<'c> {
    /// The findings of `config` from the `reports` of its enabled servers, in its order.
    pub fn new(config: &'c GatewayConfig, reports: Vec<Report>) -> Checked<'c> {
        let enabled: Vec<&ServerEntry> = config.servers.iter().filter(|s| s.enabled).collect();
        let names = names(config.name_table(), &reports);
        Checked {
            config,
            enabled,
            reports,
            names,
        }
    }

    fn server_name(&self, server: usize) -> &str {
        self.enabled.get(server).map_or("?", |s| s.name.as_str())
    }

    /// The verdict: every enabled server usable and no name shared; else the first server that
    /// is not usable, or the first name shared.
    pub fn verdict(&self) -> (bool, String) {
        for (server, report) in self.enabled.iter().zip(&self.reports) {
            let (usable, reason) = report.verdict();
            if !usable {
                return (false, format!("{}: {reason}", server.name));
            }
        }
        if let Some(c) = self.names.collisions.first() {
            return (
                false,
                format!(
                    "{} name(s) shared by two items: {}",
                    self.names.collisions.len(),
                    self.collision_text(c)
                ),
            );
        }
        let off = self.config.servers.len() - self.enabled.len();
        let off = match off {
            0 => String::new(),
            n => format!(", {n} not enabled"),
        };
        (
            true,
            format!(
                "every server works through the bridge ({} checked{off})",
                self.enabled.len()
            ),
        )
    }

    fn collision_text(&self, c: &Collision) -> String {
        format!(
            "the {} name {} comes from {:?} of {} and from {:?} of {}",
            c.kind.noun(),
            c.exposed,
            c.first.1,
            self.server_name(c.first.0),
            c.second.1,
            self.server_name(c.second.0)
        )
    }

    /// The lines of the names.
    fn name_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in &self.names.renamed {
            out.push(format!(
                "{}: {} {:?} is {} ({})",
                self.server_name(r.server),
                r.kind.noun(),
                r.original,
                r.exposed,
                r.change.word()
            ));
        }
        for u in &self.names.unnamed {
            out.push(format!(
                "{}: {} {:?} has no scheme: the bridge cannot tell its server from its URI, and leaves it out",
                self.server_name(u.server),
                u.kind.noun(),
                u.original
            ));
        }
        for c in &self.names.collisions {
            out.push(format!("collision: {}", self.collision_text(c)));
        }
        if out.is_empty() {
            out.push("every tool and prompt is its server's prefix and its own name".into());
        }
        out
    }

    /// The text: each server's report under its heading, then the names, then the verdict.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let mut reports = self.reports.iter();
        for server in &self.config.servers {
            let place = format!("{}, line {}", server.member, server.at.line);
            if !server.enabled {
                out.push_str(&format!(
                    "== {} ({place}): not enabled, not checked\n\n",
                    server.name
                ));
                continue;
            }
            out.push_str(&format!("== {} ({place})\n", server.name));
            if let Some(report) = reports.next() {
                out.push_str(&report.to_text());
            }
            out.push('\n');
        }
        out.push_str("== names behind one bridge\n");
        for line in self.name_lines() {
            out.push_str(&line);
            out.push('\n');
        }
        let (usable, reason) = self.verdict();
        let verdict = if usable { "usable" } else { "not usable" };
        out.push_str(&format!("\n{verdict}: {reason}\n"));
        out
    }

    /// One JSON object: a member per server (its report under `report`), the collisions and
    /// the verdict.
    pub fn to_json(&self) -> Value {
        let mut servers = Map::new();
        let mut reports = self.reports.iter();
        let mut index = 0;
        for server in &self.config.servers {
            let mut member = json!({
                "member": server.member,
                "line": server.at.line,
                "column": server.at.column,
                "enabled": server.enabled,
            });
            if server.enabled {
                let mine = |s: usize| s == index;
                member["prefix"] = json!(server.namespace.as_ref().map(|n| n.prefix.clone()));
                member["report"] = reports.next().map_or(Value::Null, Report::to_json);
                member["renamed"] = self
                    .names
                    .renamed
                    .iter()
                    .filter(|r| mine(r.server))
                    .map(|r| {
                        json!({"kind": r.kind.noun(), "name": r.original, "exposed": r.exposed,
                            "change": r.change.word()})
                    })
                    .collect();
                member["unnamed"] = self
                    .names
                    .unnamed
                    .iter()
                    .filter(|u| mine(u.server))
                    .map(|u| json!({"kind": u.kind.noun(), "uri": u.original}))
                    .collect();
                index += 1;
            }
            servers.insert(server.name.clone(), member);
        }
        let collisions: Vec<Value> = self
            .names
            .collisions
            .iter()
            .map(|c| {
                json!({
                    "kind": c.kind.noun(),
                    "exposed": c.exposed,
                    "first": {"server": self.server_name(c.first.0), "name": c.first.1},
                    "second": {"server": self.server_name(c.second.0), "name": c.second.1},
                })
            })
            .collect();
        let (usable, reason) = self.verdict();
        json!({
            "config": self.config.file,
            "servers": servers,
            "collisions": collisions,
            "usable": usable,
            "reason": reason,
        })
    }
}

/// Runs `doctor --config`; gives the exit code. `secrets` are the sign-in's variables, read at
/// start. Call from `main` before any other thread exists.
pub fn run(c: &ConfigArgs, secrets: &EnvSecrets) -> i32 {
    let config = match config_file::load(&c.path, secrets) {
        Ok(config) => config,
        Err(e) => {
            crate::log::raw_line("config", "error", &e.to_string());
            crate::log::flush(crate::log::STDERR_EXIT_FLUSH);
            return EXIT_USAGE;
        }
    };
    // SAFETY: called from main before any other thread exists: the variables whose values
    // went into a header leave the environment, so no server started here inherits them.
    unsafe { crate::auth::opener::scrub_vars(&config.secret_vars) };
    let _ = isolation::become_subreaper();
    let children = ChildRegistry::new();
    crate::app::process::stop_children_at_panic(children.clone(), "doctor", EXIT_NOT_USABLE);
    let level = c
        .log_level
        .map_or(tracing::level_filters::LevelFilter::WARN, |l| l.filter());
    crate::log::init(level);
    let system = actix::System::new();
    let reports = system.block_on(async {
        let mut reports = Vec::new();
        for server in config.servers.iter().filter(|s| s.enabled) {
            reports.push(super::examine(&server.cli, None, secrets, &children).await);
        }
        reports
    });
    isolation::stop_descendants();
    let checked = Checked::new(&config, reports);
    conclude(
        c.json,
        || checked.to_json(),
        || checked.to_text(),
        checked.verdict().0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::doctor::report::ListSeen;
    use crate::protocol::rules::names::namespace;

    fn report(lists: &[(ItemKind, &[&str])]) -> Report {
        Report {
            initialize: Some(json!({})),
            lists: lists
                .iter()
                .map(|(kind, keys)| ListSeen {
                    kind: *kind,
                    method: "list",
                    count: keys.len(),
                    pages: 1,
                    error: None,
                    refused: Vec::new(),
                    keys: keys.iter().map(|k| k.to_string()).collect(),
                })
                .collect(),
            ..Report::default()
        }
    }

    fn table(servers: &[(&str, Option<&str>)]) -> NameTable {
        let spaces = servers
            .iter()
            .filter_map(|(s, p)| namespace(s, *p).ok())
            .collect();
        NameTable::new(spaces).unwrap_or_default()
    }

    #[test]
    fn renamed_unnamed_and_shared_names_are_found_in_the_servers_order() {
        let long = "x".repeat(70);
        let files = report(&[
            (ItemKind::Tool, &["read_file", "read.file", long.as_str()]),
            (ItemKind::Prompt, &["read.file"]),
            (ItemKind::ResourceTemplate, &["file:///{path}", "{+path}"]),
        ]);
        let other = report(&[(ItemKind::Tool, &["files__read_file", "ok"])]);
        let found = names(
            table(&[("files", None), ("other", Some(""))]),
            &[files, other],
        );
        assert_eq!(
            found.renamed,
            [
                Renamed {
                    server: 0,
                    kind: ItemKind::Tool,
                    original: long.clone(),
                    exposed: format!("files__{}_c07d9e28", "x".repeat(30)),
                    change: NameChange::Shortened,
                },
                Renamed {
                    server: 0,
                    kind: ItemKind::Prompt,
                    original: "read.file".into(),
                    exposed: "files__read_file".into(),
                    change: NameChange::Sanitized,
                },
            ]
        );
        assert_eq!(
            found.unnamed,
            [Unnamed {
                server: 0,
                kind: ItemKind::ResourceTemplate,
                original: "{+path}".into()
            }]
        );
        assert_eq!(
            found.collisions,
            [
                Collision {
                    kind: ItemKind::Tool,
                    exposed: "files__read_file".into(),
                    first: (0, "read_file".into()),
                    second: (0, "read.file".into()),
                },
                Collision {
                    kind: ItemKind::Tool,
                    exposed: "files__read_file".into(),
                    first: (0, "read_file".into()),
                    second: (1, "files__read_file".into()),
                },
            ]
        );
    }
}
