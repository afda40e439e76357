//! The variables of a configuration file's strings, as VS Code resolves them in `mcp.json`
//! (VS Code's "Variables reference"): `${env:NAME}` is the environment variable NAME, so that a
//! secret never has to be written in the file; `${userHome}`, `${pathSeparator}` and `${/}`
//! are resolved too. The variables that only an editor can resolve (`${input:ID}`, which asks
//! the user, `${workspaceFolder}`, ...) are errors that say so, never left in a string that
//! would then reach a server. Any other `${...}` stays as it is, as VS Code leaves it. Pure:
//! the environment is a function given by the caller.

/// The variables of VS Code's "Variables reference" that depend on the editor's state (its
/// workspace, its open file, its settings, its commands): a bridge has none of it. A name
/// with `:` (`workspaceFolder:NAME`, `config:NAME`, `command:ID`) is matched by its part
/// before the `:`.
const EDITOR_VARIABLES: [&str; 20] = [
    "workspaceFolder",
    "workspaceFolderBasename",
    "file",
    "fileWorkspaceFolder",
    "relativeFile",
    "relativeFileDirname",
    "fileBasename",
    "fileBasenameNoExtension",
    "fileExtname",
    "fileDirname",
    "fileDirnameBasename",
    "cwd",
    "lineNumber",
    "columnNumber",
    "selectedText",
    "execPath",
    "defaultBuildTask",
    "extensionInstallFolder",
    "config",
    "command",
];

/// Why a string of the file cannot be resolved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VariableError {
    /// `${env:NAME}` (or `${userHome}`: `HOME`) of a variable that is not set.
    #[error("the variable {0} is not set")]
    Unset(String),
    /// `${input:ID}`: VS Code asks the user for it (the file's `inputs`).
    #[error(
        "${{{0}}} is asked of the user by VS Code, which mcp-bridge cannot do: give the value with ${{env:NAME}}"
    )]
    Input(String),
    /// A variable of the editor's state (`${workspaceFolder}`, ...), or `${env:}` without a
    /// name.
    #[error(
        "${{{0}}} is a variable of the editor that mcp-bridge cannot resolve: give the value, or ${{env:NAME}}"
    )]
    Editor(String),
}

/// `text` with its variables resolved; `env` gives an environment variable's value (`None`:
/// not set). Errors: [`VariableError`], the first variable that cannot be resolved.
pub fn expand(
    text: &str,
    env: &mut dyn FnMut(&str) -> Option<String>,
) -> Result<String, VariableError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        let name = &rest[start + 2..start + 2 + len];
        out.push_str(&rest[..start]);
        match resolve(name, env)? {
            Some(value) => out.push_str(&value),
            None => out.push_str(&rest[start..start + 3 + len]),
        }
        rest = &rest[start + 3 + len..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The value of the variable `name` (the text between `${` and `}`); `None` for one that is
/// not VS Code's, which stays as it is.
fn resolve(
    name: &str,
    env: &mut dyn FnMut(&str) -> Option<String>,
) -> Result<Option<String>, VariableError> {
    if let Some(var) = name.strip_prefix("env:") {
        if var.is_empty() {
            return Err(VariableError::Editor(name.to_owned()));
        }
        return env(var)
            .map(Some)
            .ok_or_else(|| VariableError::Unset(var.to_owned()));
    }
    if name.starts_with("input:") {
        return Err(VariableError::Input(name.to_owned()));
    }
    match name {
        "userHome" => env("HOME")
            .map(Some)
            .ok_or_else(|| VariableError::Unset("HOME".to_owned())),
        "pathSeparator" | "/" => Ok(Some(std::path::MAIN_SEPARATOR.to_string())),
        _ if EDITOR_VARIABLES.contains(&name.split(':').next().unwrap_or(name)) => {
            Err(VariableError::Editor(name.to_owned()))
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(text: &str) -> Result<String, String> {
        let mut env = |name: &str| match name {
            "TOKEN" => Some("t0k".to_owned()),
            "HOME" => Some("/home/u".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        expand(text, &mut env).map_err(|e| e.to_string())
    }

    #[test]
    fn env_variables_and_the_home_and_separator_are_resolved() {
        for (text, want) in [
            ("Bearer ${env:TOKEN}", "Bearer t0k"),
            ("${env:TOKEN}${env:TOKEN}", "t0kt0k"),
            ("a${env:EMPTY}b", "ab"),
            ("${userHome}${/}src${pathSeparator}x", "/home/u/src/x"),
            ("no variable", "no variable"),
            (
                "$HOME and ${HOME} and ${unknown:x} stay",
                "$HOME and ${HOME} and ${unknown:x} stay",
            ),
            ("an open ${env:TOKEN", "an open ${env:TOKEN"),
            ("${env:TOKEN} then ${", "t0k then ${"),
            ("", ""),
        ] {
            assert_eq!(expanded(text), Ok(want.to_owned()), "{text}");
        }
    }

    #[test]
    fn a_variable_that_cannot_be_resolved_is_named_with_why() {
        for (text, want) in [
            ("${env:MISSING}", "the variable MISSING is not set"),
            (
                "x ${input:api-key}",
                "${input:api-key} is asked of the user by VS Code, which mcp-bridge cannot do: give the value with ${env:NAME}",
            ),
            (
                "${workspaceFolder}/server.py",
                "${workspaceFolder} is a variable of the editor that mcp-bridge cannot resolve: give the value, or ${env:NAME}",
            ),
            (
                "${workspaceFolder:api}",
                "${workspaceFolder:api} is a variable of the editor that mcp-bridge cannot resolve: give the value, or ${env:NAME}",
            ),
            (
                "${config:editor.fontSize}",
                "${config:editor.fontSize} is a variable of the editor that mcp-bridge cannot resolve: give the value, or ${env:NAME}",
            ),
            (
                "${env:}",
                "${env:} is a variable of the editor that mcp-bridge cannot resolve: give the value, or ${env:NAME}",
            ),
        ] {
            assert_eq!(expanded(text), Err(want.to_owned()), "{text}");
        }
    }
}
