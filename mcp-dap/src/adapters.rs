//! The debug adapters `mcp-dap` knows: the built-in ones (debugpy, lldb-dap) and those given
//! with `--adapter NAME=COMMAND...`; how each is started and how its `launch` arguments are
//! written.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// The placeholder of a TCP adapter's command line: the port `mcp-dap` chose, which the
/// adapter listens on (lldb-dap's `--port {port}`, debugpy.adapter's `--port {port}`).
pub const PORT_PLACEHOLDER: &str = "{port}";

/// The names lldb-dap has had: `lldb-dap` (LLVM 18 and later) and `lldb-vscode` before it;
/// Debian and Ubuntu ship them with the LLVM version as suffix (`lldb-dap-19`).
const LLDB_NAMES: [&str; 2] = ["lldb-dap", "lldb-vscode"];

/// The Debian package named in the error when no lldb-dap is found.
const LLDB_INSTALL_HINT: &str = "apt-get install lldb-19";

/// The command that installs debugpy for the `python3` that starts its adapter.
const DEBUGPY_INSTALL_HINT: &str = "python3 -m pip install debugpy";

/// Names with a known meaning (a language) and the built-in adapter each maps to.
const ALIASES: [(&str, &str); 5] = [
    ("python", "debugpy"),
    ("c", "lldb"),
    ("cpp", "lldb"),
    ("c++", "lldb"),
    ("rust", "lldb"),
];

/// The first bytes of an ELF executable (the System V ABI's `e_ident` magic).
const ELF_MAGIC: [u8; 4] = [0x7f, b'E', b'L', b'F'];

/// The most of a program read to tell its kind (its ELF magic, or its `#!` line), in bytes.
const MAX_PROBE_BYTES: u64 = 256;

/// How an adapter's `launch` arguments are written: they are adapter-specific (DAP
/// "LaunchRequestArguments" leaves them to each adapter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// debugpy: `env` an object, `console: internalConsole` so the output comes as events.
    Debugpy,
    /// lldb-dap: `env` a list of `NAME=VALUE` strings (lldb-dap 19 reads only that form).
    Lldb,
    /// Any other: `program`, `args`, `cwd`, `env` as an object, `stopOnEntry`.
    Other,
}

/// How to reach an adapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// DAP on the adapter's stdin and stdout.
    Stdio,
    /// DAP on a TCP connection to 127.0.0.1 at the port put in place of [`PORT_PLACEHOLDER`].
    Tcp,
    /// DAP on a TCP connection to 127.0.0.1 at the port the adapter chose and printed on its
    /// stdout ([`printed_port`]; `--adapter-printing-port`).
    Printed,
    /// DAP on a TCP connection to a server that listens already on 127.0.0.1 at this port
    /// (`attach`): no process is started.
    Listening(u16),
}

/// One adapter, ready to start.
#[derive(Debug, Clone)]
pub struct AdapterDef {
    /// Its program (a name looked up in PATH, or a path).
    pub command: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Its id for `initialize` (`adapterID`).
    pub adapter_id: String,
    /// How its `launch` arguments are written.
    pub flavor: Flavor,
    /// How it is reached.
    pub reach: Reach,
}

/// The adapters by name: the built-in ones and those of `--adapter`.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    custom: BTreeMap<String, AdapterDef>,
}

/// Why an `--adapter` or `--adapter-printing-port` option is refused (exit 2): the option's
/// value as given, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdapterOptionError {
    #[error("--adapter {0:?}: expected NAME=COMMAND [ARG...]")]
    NoName(String),
    #[error("--adapter {0:?}: the command is empty")]
    EmptyCommand(String),
    #[error("--adapter {0:?}: the name is empty")]
    EmptyName(String),
}

/// Why no adapter fits a session (the tool's error): each names the choices.
#[derive(Debug, thiserror::Error)]
pub enum NoAdapter {
    /// No adapter has this name (echoed): the adapters there are.
    #[error("unknown adapter {name}; the adapters: {choices}")]
    Unknown { name: String, choices: String },
    /// lldb-dap is nowhere in `PATH` (its value, lossy): where it was looked for and how to
    /// install it.
    #[error(
        "no lldb-dap found: looked for lldb-dap, lldb-dap-NN, lldb-vscode and lldb-vscode-NN \
         in PATH ({path}); install it (on Debian: {}), or give its command with \
         `mcp-dap --adapter lldb=/path/to/lldb-dap`",
        LLDB_INSTALL_HINT
    )]
    NoLldbDap { path: String },
    /// The program (echoed) cannot be read to tell its adapter.
    #[error(
        "cannot read the program {program}: {error}; name its adapter with `adapter` ({choices})"
    )]
    Unreadable {
        program: String,
        error: std::io::Error,
        choices: String,
    },
    /// The program (echoed) is neither a Python file nor an ELF executable.
    #[error(
        "cannot tell the adapter of {program} (neither a .py file nor an ELF executable): name \
         it with `adapter` ({choices})"
    )]
    UnknownKind { program: String, choices: String },
}

impl Registry {
    /// The registry with the adapters of `--adapter NAME=COMMAND...` options: `COMMAND...` is
    /// split at whitespace; an argument `{port}` makes it a TCP adapter. With `printing`, the
    /// adapters of `--adapter-printing-port NAME=COMMAND...`: adapters that choose their port
    /// and print it.
    ///
    /// Errors: [`AdapterOptionError`], an option without `NAME=` or without a command.
    pub fn with_all_options(
        options: &[String],
        printing: &[String],
    ) -> Result<Self, AdapterOptionError> {
        let mut custom = BTreeMap::new();
        let all = options
            .iter()
            .map(|o| (o, false))
            .chain(printing.iter().map(|o| (o, true)));
        for (option, prints_port) in all {
            let Some((name, command)) = option.split_once('=') else {
                return Err(AdapterOptionError::NoName(option.clone()));
            };
            let mut words = command.split_whitespace().map(OsString::from);
            let (name, Some(program)) = (name.trim(), words.next()) else {
                return Err(AdapterOptionError::EmptyCommand(option.clone()));
            };
            if name.is_empty() {
                return Err(AdapterOptionError::EmptyName(option.clone()));
            }
            let args: Vec<OsString> = words.collect();
            let reach = if prints_port {
                Reach::Printed
            } else if args
                .iter()
                .any(|a| a.to_string_lossy().contains(PORT_PLACEHOLDER))
            {
                Reach::Tcp
            } else {
                Reach::Stdio
            };
            let flavor = match name {
                "debugpy" => Flavor::Debugpy,
                "lldb" => Flavor::Lldb,
                _ => Flavor::Other,
            };
            custom.insert(
                name.to_owned(),
                AdapterDef {
                    command: program,
                    args,
                    adapter_id: name.to_owned(),
                    flavor,
                    reach,
                },
            );
        }
        Ok(Self { custom })
    }

    /// Every adapter name, for the error of an unknown one.
    pub fn names(&self) -> Vec<String> {
        let mut names = vec![
            "debugpy (or python)".to_owned(),
            "lldb (or c, cpp, c++, rust)".to_owned(),
        ];
        for name in self.custom.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        names
    }

    /// The adapter of `name`; an `--adapter` of a built-in name replaces it.
    ///
    /// Errors: [`NoAdapter`], an unknown name or an lldb-dap that is nowhere in PATH.
    /// A name is matched without regard to ASCII case (`Python`, `LLDB`); an `--adapter`
    /// name spelled exactly as given wins over one that differs only in case.
    pub fn resolve(&self, name: &str) -> Result<AdapterDef, NoAdapter> {
        let custom = self.custom.get(name).or_else(|| {
            self.custom
                .iter()
                .find(|(known, _)| known.eq_ignore_ascii_case(name))
                .map(|(_, def)| def)
        });
        if let Some(def) = custom {
            return Ok(def.clone());
        }
        if let Some((_, builtin)) = ALIASES
            .iter()
            .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
        {
            return self.resolve(builtin);
        }
        match name.to_ascii_lowercase().as_str() {
            // debugpy's adapter speaks DAP on its stdio when started without --port.
            "debugpy" => Ok(AdapterDef {
                command: "python3".into(),
                args: vec!["-m".into(), "debugpy.adapter".into()],
                adapter_id: "debugpy".into(),
                flavor: Flavor::Debugpy,
                reach: Reach::Stdio,
            }),
            "lldb" => {
                let path_var = std::env::var_os("PATH").unwrap_or_default();
                Ok(AdapterDef {
                    command: find_lldb_dap(&path_var)?.into_os_string(),
                    args: Vec::new(),
                    adapter_id: "lldb-dap".into(),
                    flavor: Flavor::Lldb,
                    reach: Reach::Stdio,
                })
            }
            _ => Err(NoAdapter::Unknown {
                name: crate::echo::echoed(name),
                choices: self.names().join(", "),
            }),
        }
    }
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The version of a versioned name (`lldb-dap-19` of `lldb-dap`: 19).
fn version_of(file: &str, base: &str) -> Option<u32> {
    file.strip_prefix(base)?.strip_prefix('-')?.parse().ok()
}

/// lldb-dap in `path_var`: `lldb-dap`, then `lldb-dap-NN` newest first, then the same for
/// `lldb-vscode`, its name before LLVM 18.
///
/// Errors: [`NoAdapter::NoLldbDap`], which names what was looked for, where, and how to
/// install it.
pub fn find_lldb_dap(path_var: &std::ffi::OsStr) -> Result<PathBuf, NoAdapter> {
    let dirs: Vec<PathBuf> = std::env::split_paths(path_var).collect();
    for base in LLDB_NAMES {
        if let Some(found) = dirs.iter().map(|d| d.join(base)).find(|p| is_executable(p)) {
            return Ok(found);
        }
        let mut versioned: Vec<(u32, PathBuf)> = Vec::new();
        for dir in &dirs {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let name = entry.file_name();
                let Some(version) = name.to_str().and_then(|n| version_of(n, base)) else {
                    continue;
                };
                let path = entry.path();
                if is_executable(&path) {
                    versioned.push((version, path));
                }
            }
        }
        // The newest version; of equal ones, the first in PATH order (a stable sort).
        versioned.sort_by_key(|b| std::cmp::Reverse(b.0));
        if let Some((_, path)) = versioned.into_iter().next() {
            return Ok(path);
        }
    }
    Err(NoAdapter::NoLldbDap {
        path: path_var.to_string_lossy().into_owned(),
    })
}

/// The adapter of a `launch` that names none, from its program: a Python file (`.py`,
/// `.pyw`, or a `#!` line naming python) gets debugpy, an ELF executable lldb-dap.
///
/// Errors: [`NoAdapter`], why none fits, with the choices.
pub fn adapter_for_program(program: &Path, registry: &Registry) -> Result<&'static str, NoAdapter> {
    let extension = program.extension().and_then(|e| e.to_str());
    if matches!(extension, Some("py" | "pyw")) {
        return Ok("debugpy");
    }
    let mut head = Vec::new();
    let read = std::fs::File::open(program).and_then(|f| {
        std::io::Read::read_to_end(&mut std::io::Read::take(f, MAX_PROBE_BYTES), &mut head)
    });
    let choices = registry.names().join(", ");
    if let Err(error) = read {
        return Err(NoAdapter::Unreadable {
            program: crate::echo::echoed(&program.to_string_lossy()),
            error,
            choices,
        });
    }
    if head.starts_with(&ELF_MAGIC) {
        return Ok("lldb");
    }
    let first_line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    if first_line.starts_with(b"#!") && String::from_utf8_lossy(first_line).contains("python") {
        return Ok("debugpy");
    }
    Err(NoAdapter::UnknownKind {
        program: crate::echo::echoed(&program.to_string_lossy()),
        choices,
    })
}

/// What to say of an adapter that ended before it answered `initialize` (`cause`): its
/// command line, the command that installs it, and the option that names another command.
pub fn broken_hint(name: &str, def: &AdapterDef, cause: &str) -> String {
    let mut command = def.command.to_string_lossy().into_owned();
    for arg in &def.args {
        command.push(' ');
        command.push_str(&arg.to_string_lossy());
    }
    let install = match def.flavor {
        Flavor::Debugpy => {
            format!("is debugpy installed for it? install it with `{DEBUGPY_INSTALL_HINT}`, or ")
        }
        Flavor::Lldb => format!("install lldb-dap (on Debian: {LLDB_INSTALL_HINT}), or "),
        Flavor::Other => String::new(),
    };
    format!(
        "the adapter {name} (`{command}`) ended before it answered `initialize` ({cause}): \
         {install}give the adapter's command with `mcp-dap --adapter {name}=COMMAND [ARG...]`"
    )
}

/// The adapter of a child session that `parent`'s adapter asked for: the listener named by
/// the configuration's `connect` (debugpy's adapter, which serves each child on a
/// connection of its own), else a new instance of the parent's adapter.
pub fn child_adapter(parent: &AdapterDef, configuration: &Value) -> AdapterDef {
    let port = configuration["connect"]["port"]
        .as_u64()
        .and_then(|p| u16::try_from(p).ok());
    match port {
        Some(port) => AdapterDef {
            command: OsString::new(),
            args: Vec::new(),
            adapter_id: parent.adapter_id.clone(),
            flavor: parent.flavor,
            reach: Reach::Listening(port),
        },
        None => parent.clone(),
    }
}

/// What a launch asks for, adapter-neutral.
pub struct LaunchWish<'a> {
    /// The program, absolute.
    pub program: &'a Path,
    /// Its arguments.
    pub args: &'a [String],
    /// Its working directory, absolute.
    pub cwd: Option<&'a Path>,
    /// Environment variables added to the debuggee's.
    pub env: &'a BTreeMap<String, String>,
    /// Whether to stop at the entry.
    pub stop_on_entry: bool,
    /// Whether child processes are debugged as sessions of their own (debugpy's
    /// `subProcess`); otherwise they run without a debugger.
    pub follow_children: bool,
    /// Adapter-specific arguments, merged last (they win).
    pub extra: Option<&'a Map<String, Value>>,
}

/// The adapter that `attach` talks to: the DAP server listening on 127.0.0.1 at `port`.
pub fn listening(name: Option<&str>, port: u16) -> AdapterDef {
    let name = name.unwrap_or("debugpy");
    AdapterDef {
        command: OsString::new(),
        args: Vec::new(),
        adapter_id: name.to_owned(),
        flavor: match name {
            "debugpy" => Flavor::Debugpy,
            "lldb" => Flavor::Lldb,
            _ => Flavor::Other,
        },
        reach: Reach::Listening(port),
    }
}

/// The `launch` request's arguments for `flavor`.
pub fn launch_arguments(flavor: Flavor, wish: &LaunchWish<'_>) -> Value {
    let mut arguments = json!({
        "request": "launch", "program": wish.program, "args": wish.args,
        "stopOnEntry": wish.stop_on_entry,
    });
    if let Some(cwd) = wish.cwd {
        arguments["cwd"] = json!(cwd);
    }
    match flavor {
        Flavor::Debugpy => {
            arguments["console"] = json!("internalConsole");
            arguments["justMyCode"] = json!(true);
            arguments["subProcess"] = json!(wish.follow_children);
        }
        Flavor::Lldb | Flavor::Other => {}
    }
    if !wish.env.is_empty() {
        arguments["env"] = match flavor {
            Flavor::Lldb => json!(
                wish.env
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
            ),
            Flavor::Debugpy | Flavor::Other => json!(wish.env),
        };
    }
    if let (Some(extra), Some(out)) = (wish.extra, arguments.as_object_mut()) {
        for (key, value) in extra {
            out.insert(key.clone(), value.clone());
        }
    }
    arguments
}

/// The port in a line an adapter prints when it listens: the last number of a line that
/// names a port or a listen (`port` or `listen`, any case), in 1..=65535. The forms of real
/// adapters: codelldb `Listening on port 41233`, js-debug's `dapDebugServer.js`
/// `Debug server listening at ::1:8123`, netcoredbg-style `DAP server listening on port 4711`.
pub fn printed_port(line: &str) -> Option<u16> {
    let lower = line.to_ascii_lowercase();
    if !(lower.contains("port") || lower.contains("listen")) {
        return None;
    }
    let digits: Vec<&str> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|d| !d.is_empty())
        .collect();
    digits
        .last()
        .and_then(|d| d.parse::<u16>().ok())
        .filter(|p| *p != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_adapter_option_says_which_part_is_missing() {
        for (option, want, text) in [
            (
                "debugpy",
                AdapterOptionError::NoName("debugpy".into()),
                "--adapter \"debugpy\": expected NAME=COMMAND [ARG...]",
            ),
            (
                "x= ",
                AdapterOptionError::EmptyCommand("x= ".into()),
                "--adapter \"x= \": the command is empty",
            ),
            (
                "=prog",
                AdapterOptionError::EmptyName("=prog".into()),
                "--adapter \"=prog\": the name is empty",
            ),
        ] {
            let got = Registry::with_all_options(&[option.to_owned()], &[]).err();
            assert_eq!(got.as_ref(), Some(&want), "{option}");
            assert_eq!(got.map(|e| e.to_string()).as_deref(), Some(text));
        }
    }

    #[test]
    fn an_unknown_adapter_and_an_unknown_program_name_the_choices() {
        let registry = Registry::with_all_options(&[], &[]).unwrap_or_else(|e| panic!("{e}"));
        let choices = registry.names().join(", ");
        assert_eq!(
            registry.resolve("nope").err().map(|e| e.to_string()),
            Some(format!("unknown adapter \"nope\"; the adapters: {choices}"))
        );
        assert_eq!(
            adapter_for_program(Path::new("/nonexistent/prog"), &registry)
                .err()
                .map(|e| e.to_string()),
            Some(format!(
                "cannot read the program \"/nonexistent/prog\": No such file or directory (os error 2); name its adapter with `adapter` ({choices})"
            ))
        );
        let no_lldb = find_lldb_dap(std::ffi::OsStr::new("/nonexistent")).err();
        assert!(
            matches!(&no_lldb, Some(NoAdapter::NoLldbDap { path }) if path == "/nonexistent"),
            "{no_lldb:?}"
        );
    }

    #[test]
    fn the_port_of_a_listen_line_is_its_last_number() {
        for (line, want) in [
            ("Listening on port 41233", Some(41233)),
            ("Debug server listening at ::1:8123", Some(8123)),
            ("DAP server listening on port 4711\r", Some(4711)),
            ("listening at 127.0.0.1:50000", Some(50000)),
            ("Starting up 2 workers", None),
            ("Listening on port 0", None),
            ("Listening on port 70000", None),
            ("port: none yet", None),
        ] {
            assert_eq!(printed_port(line), want, "{line:?}");
        }
    }

    /// A def's command line as text, and how it is started and reached.
    fn shape(def: &AdapterDef) -> (String, String, Flavor, Reach) {
        let args: Vec<String> = def
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let command = def.command.to_string_lossy().into_owned();
        (command, args.join(" "), def.flavor, def.reach.clone())
    }

    #[test]
    fn a_name_picks_its_adapter_without_regard_to_case_and_an_option_replaces_a_builtin() {
        let builtin = Registry::default();
        for name in ["debugpy", "python", "Python", "DEBUGPY"] {
            let def = builtin
                .resolve(name)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                shape(&def),
                (
                    "python3".into(),
                    "-m debugpy.adapter".into(),
                    Flavor::Debugpy,
                    Reach::Stdio
                ),
                "{name}"
            );
            assert_eq!(def.adapter_id, "debugpy");
        }
        let options = [
            "debugpy=/venv/bin/python -m debugpy.adapter".to_owned(),
            "Mine=/bin/mine --port {port}".to_owned(),
            "mine=/bin/other".to_owned(),
        ];
        let given = Registry::with_all_options(&options, &["js=node dap.js".to_owned()])
            .unwrap_or_else(|e| panic!("{e}"));
        let python = given.resolve("python").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            shape(&python),
            (
                "/venv/bin/python".into(),
                "-m debugpy.adapter".into(),
                Flavor::Debugpy,
                Reach::Stdio
            )
        );
        // The exact spelling wins over a name that differs only in case.
        let exact = given.resolve("Mine").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            shape(&exact),
            (
                "/bin/mine".into(),
                "--port {port}".into(),
                Flavor::Other,
                Reach::Tcp
            )
        );
        let other = given.resolve("MINE").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(other.adapter_id, "Mine");
        let js = given.resolve("js").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            shape(&js),
            (
                "node".into(),
                "dap.js".into(),
                Flavor::Other,
                Reach::Printed
            )
        );
        assert_eq!(
            given.names(),
            [
                "debugpy (or python)",
                "lldb (or c, cpp, c++, rust)",
                "Mine",
                "debugpy",
                "js",
                "mine"
            ]
        );
    }

    #[test]
    fn a_language_name_resolves_to_the_adapter_of_its_language() {
        let languages = ["c", "cpp", "c++", "rust", "C++", "Rust"];
        // The built-in lldb is looked for in PATH; given with `--adapter`, it is the same on
        // every machine.
        let options = ["lldb=/opt/llvm/bin/lldb-dap".to_owned()];
        let given = Registry::with_all_options(&options, &[]).unwrap_or_else(|e| panic!("{e}"));
        for name in languages {
            let def = given
                .resolve(name)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                (shape(&def), def.adapter_id.as_str()),
                (
                    (
                        "/opt/llvm/bin/lldb-dap".into(),
                        String::new(),
                        Flavor::Lldb,
                        Reach::Stdio
                    ),
                    "lldb"
                ),
                "{name}"
            );
        }
        let python = given.resolve("python").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (shape(&python), python.adapter_id.as_str()),
            (
                (
                    "python3".into(),
                    "-m debugpy.adapter".into(),
                    Flavor::Debugpy,
                    Reach::Stdio
                ),
                "debugpy"
            )
        );
        // Without it, each language name gives what `lldb` gives: the lldb-dap of PATH, or
        // the error that names where it was looked for.
        let builtin = Registry::default();
        let outcome = |name: &str| {
            builtin
                .resolve(name)
                .map(|def| (shape(&def), def.adapter_id))
                .map_err(|e| e.to_string())
        };
        for name in languages {
            assert_eq!(outcome(name), outcome("lldb"), "{name}");
        }
    }

    #[test]
    fn launch_arguments_follow_the_adapter() {
        let env = BTreeMap::from([("A".to_owned(), "1".to_owned())]);
        let extra = json!({"justMyCode": false, "sourceMap": {"/a": "/b"}});
        let wish = LaunchWish {
            program: Path::new("/w/p"),
            args: &["x".to_owned()],
            cwd: Some(Path::new("/w")),
            env: &env,
            stop_on_entry: true,
            follow_children: false,
            extra: extra.as_object(),
        };
        assert_eq!(
            launch_arguments(Flavor::Debugpy, &wish),
            json!({"request": "launch", "program": "/w/p", "args": ["x"], "stopOnEntry": true,
                "cwd": "/w", "console": "internalConsole", "justMyCode": false,
                "subProcess": false, "env": {"A": "1"}, "sourceMap": {"/a": "/b"}})
        );
        let wish = LaunchWish {
            cwd: None,
            extra: None,
            ..wish
        };
        assert_eq!(
            launch_arguments(Flavor::Lldb, &wish),
            json!({"request": "launch", "program": "/w/p", "args": ["x"], "stopOnEntry": true,
                "env": ["A=1"]})
        );
    }

    #[test]
    fn a_child_session_with_connect_reaches_its_listener_else_a_new_parent_adapter() {
        let parent = Registry::default()
            .resolve("debugpy")
            .unwrap_or_else(|e| panic!("{e}"));
        let child = child_adapter(
            &parent,
            &json!({"connect": {"host": "127.0.0.1", "port": 5678}}),
        );
        assert_eq!(
            shape(&child),
            (
                String::new(),
                String::new(),
                Flavor::Debugpy,
                Reach::Listening(5678)
            )
        );
        assert_eq!(child.adapter_id, "debugpy");
        for configuration in [json!({}), json!({"connect": {"port": 70000}})] {
            let child = child_adapter(&parent, &configuration);
            assert_eq!(shape(&child), shape(&parent), "{configuration}");
        }
    }
}
