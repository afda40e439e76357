//! The editors' configuration that runs `mcp-bridge` in front of the server doctor examined:
//! VS Code (`.vscode/mcp.json`, `servers`), Claude Desktop (`claude_desktop_config.json`,
//! `mcpServers`) and Cursor (`.cursor/mcp.json`, `mcpServers`). The program paths are
//! absolute where they can be: an editor starts its servers with a short `PATH`.

use serde_json::{Value, json};
use std::ffi::OsString;
use std::path::Path;

/// One editor's snippet.
#[derive(Debug)]
pub struct Snippet {
    /// The editor.
    pub editor: &'static str,
    /// The file the snippet goes into.
    pub file: &'static str,
    /// The JSON to merge into that file.
    pub json: Value,
}

/// The `command` and `args` of the server entry: this `mcp-bridge` (`exe`), then the bridge's
/// arguments as doctor got them, with the server's program replaced by its absolute path when
/// `resolved` gives one (`command_start`: the index of the program in `bridge_args`; `None`
/// for a URL), and every other argument that names an existing file or folder relative to
/// `cwd` (doctor's current folder: `server.py`, `./data`) by its full path, since an editor
/// starts its servers in a folder of its own.
pub fn entry(
    exe: &Path,
    bridge_args: &[OsString],
    command_start: Option<usize>,
    resolved: Option<&Path>,
    cwd: Option<&Path>,
) -> (String, Vec<String>) {
    let args = bridge_args
        .iter()
        .enumerate()
        .map(|(i, a)| match (command_start, resolved) {
            (Some(start), Some(path)) if i == start && path.is_absolute() => {
                path.to_string_lossy().into_owned()
            }
            _ => in_folder(a, cwd).unwrap_or_else(|| a.to_string_lossy().into_owned()),
        })
        .collect();
    (exe.to_string_lossy().into_owned(), args)
}

/// The full path of `arg` when it is a relative path (not an option) to something that exists
/// in `cwd`: `cwd` joined with it, without its `.` components.
fn in_folder(arg: &OsString, cwd: Option<&Path>) -> Option<String> {
    let cwd = cwd?;
    let path = Path::new(arg);
    if arg.is_empty() || arg.as_encoded_bytes().starts_with(b"-") || path.is_absolute() {
        return None;
    }
    let full: std::path::PathBuf = cwd.join(path).components().collect();
    full.exists().then(|| full.to_string_lossy().into_owned())
}

/// The three snippets of a server entry named `name`.
pub fn snippets(name: &str, command: &str, args: &[String]) -> Vec<Snippet> {
    let stdio = json!({"command": command, "args": args});
    let mut vscode = json!({"type": "stdio"});
    if let (Some(v), Some(s)) = (vscode.as_object_mut(), stdio.as_object()) {
        v.extend(s.clone());
    }
    vec![
        Snippet {
            editor: "VS Code",
            file: ".vscode/mcp.json",
            json: json!({"servers": {name: vscode}}),
        },
        Snippet {
            editor: "Claude Desktop",
            file: "claude_desktop_config.json",
            json: json!({"mcpServers": {name: stdio.clone()}}),
        },
        Snippet {
            editor: "Cursor",
            file: ".cursor/mcp.json",
            json: json!({"mcpServers": {name: stdio}}),
        },
    ]
}

/// The JSON report's `config` member: each editor's snippet under its key.
pub fn to_json(snippets: &[Snippet]) -> Value {
    let mut out = serde_json::Map::new();
    for s in snippets {
        let key = match s.editor {
            "VS Code" => "vscode",
            "Claude Desktop" => "claude_desktop",
            _ => "cursor",
        };
        out.insert(key.into(), json!({"file": s.file, "json": s.json}));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_runs_this_bridge_with_the_options_and_the_programs_absolute_path() {
        let args: Vec<OsString> = ["--name", "x", "python3", "s.py"]
            .iter()
            .map(OsString::from)
            .collect();
        let (command, a) = entry(
            Path::new("/opt/bin/mcp-bridge"),
            &args,
            Some(2),
            Some(Path::new("/usr/bin/python3")),
            None,
        );
        assert_eq!(command, "/opt/bin/mcp-bridge");
        assert_eq!(a, ["--name", "x", "/usr/bin/python3", "s.py"]);
        let (_, a) = entry(Path::new("/b"), &args, Some(2), None, None);
        assert_eq!(a, ["--name", "x", "python3", "s.py"]);
    }

    #[test]
    fn each_editor_gets_its_own_shape() {
        let s = snippets("files", "/b/mcp-bridge", &["srv".to_string()]);
        assert_eq!(
            to_json(&s),
            json!({
                "vscode": {"file": ".vscode/mcp.json", "json": {"servers": {"files":
                    {"type": "stdio", "command": "/b/mcp-bridge", "args": ["srv"]}}}},
                "claude_desktop": {"file": "claude_desktop_config.json", "json": {"mcpServers":
                    {"files": {"command": "/b/mcp-bridge", "args": ["srv"]}}}},
                "cursor": {"file": ".cursor/mcp.json", "json": {"mcpServers":
                    {"files": {"command": "/b/mcp-bridge", "args": ["srv"]}}}}
            })
        );
    }
}
