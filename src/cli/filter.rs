//! The filter options (`--allow-tool`, `--deny-tool`, `--allow-prompt`, `--deny-prompt`,
//! `--allow-resource`, `--deny-resource`), flattened into the command line, and the item
//! filter they make (`protocol::rules::item_filter`). Each glob is checked as it is read: an invalid
//! one is a usage error (exit 2) naming the option, the glob and why.

use crate::protocol::rules::item_filter::{GlobError, Globs, ItemFilter, check_glob};

/// The heading of the filter options in `--help`.
const FILTERS_HEADING: &str = "Filters";

/// The filter options (their own section of `--help`, after the others).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct FilterArgs {
    /// Show only the tools whose name matches GLOB (repeatable; without it, every tool that no --deny-tool matches)
    #[arg(help_heading = FILTERS_HEADING, long = "allow-tool", value_name = "GLOB", value_parser = check_glob)]
    pub allow_tool: Vec<String>,
    /// Hide the tools whose name matches GLOB (repeatable; wins over --allow-tool); a call of a hidden tool gets the error of an unknown tool and never reaches the server
    #[arg(help_heading = FILTERS_HEADING, long = "deny-tool", value_name = "GLOB", value_parser = check_glob)]
    pub deny_tool: Vec<String>,
    /// Show only the prompts whose name matches GLOB (repeatable)
    #[arg(help_heading = FILTERS_HEADING, long = "allow-prompt", value_name = "GLOB", value_parser = check_glob)]
    pub allow_prompt: Vec<String>,
    /// Hide the prompts whose name matches GLOB (repeatable; wins over --allow-prompt)
    #[arg(help_heading = FILTERS_HEADING, long = "deny-prompt", value_name = "GLOB", value_parser = check_glob)]
    pub deny_prompt: Vec<String>,
    /// Show only the resources whose URI, and the resource templates whose uriTemplate, matches GLOB (repeatable)
    #[arg(help_heading = FILTERS_HEADING, long = "allow-resource", value_name = "GLOB", value_parser = check_glob)]
    pub allow_resource: Vec<String>,
    /// Hide the resources whose URI, and the resource templates whose uriTemplate, matches GLOB (repeatable; wins over --allow-resource)
    #[arg(help_heading = FILTERS_HEADING, long = "deny-resource", value_name = "GLOB", value_parser = check_glob)]
    pub deny_resource: Vec<String>,
}

impl FilterArgs {
    /// The item filter of the options; `None` when none is given. Errors: [`GlobError`] when
    /// a set of globs does not build (each glob was checked when it was read).
    pub fn filter(&self) -> Result<Option<ItemFilter>, GlobError> {
        let tools = Globs::new(
            ("--allow-tool", &self.allow_tool),
            ("--deny-tool", &self.deny_tool),
        )?;
        let prompts = Globs::new(
            ("--allow-prompt", &self.allow_prompt),
            ("--deny-prompt", &self.deny_prompt),
        )?;
        let resources = Globs::new(
            ("--allow-resource", &self.allow_resource),
            ("--deny-resource", &self.deny_resource),
        )?;
        Ok(ItemFilter::new(tools, prompts, resources))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Parsed, parse};
    use crate::protocol::rules::list_items::ItemKind;
    use serde_json::json;

    #[test]
    fn the_options_make_the_filter_and_none_makes_none() {
        let Parsed::Run(cli) = parse(["mcp-bridge", "--", "srv"]) else {
            panic!("expected Run");
        };
        assert!(cli.config().item_filter.is_none());
        let Parsed::Run(cli) = parse([
            "mcp-bridge",
            "--allow-tool",
            "read_*",
            "--allow-tool",
            "list_*",
            "--deny-tool",
            "list_secrets",
            "--deny-resource",
            "file:///secret/*",
            "srv",
            "--allow-tool",
            "x",
        ]) else {
            panic!("expected Run");
        };
        // The options after the command are the command's.
        assert_eq!(cli.command.len(), 3);
        let config = cli.config();
        let Some(filter) = config.item_filter.as_deref() else {
            panic!("no filter");
        };
        for (name, shown) in [
            ("read_file", true),
            ("list_dir", true),
            ("list_secrets", false),
            ("write_file", false),
            ("x", false),
        ] {
            assert_eq!(
                filter.admits_item(ItemKind::Tool, &json!({ "name": name })),
                shown,
                "{name}"
            );
        }
        assert!(filter.prompts.is_none());
        assert!(!filter.admits_item(ItemKind::Resource, &json!({"uri": "file:///secret/k"})));
        assert!(filter.admits_item(ItemKind::Resource, &json!({"uri": "file:///pub/k"})));
    }

    #[test]
    fn an_invalid_glob_is_a_usage_error_naming_the_option_and_the_glob() {
        let Parsed::Usage(text) = parse(["mcp-bridge", "--allow-tool", "a[", "srv"]) else {
            panic!("expected a usage error");
        };
        assert!(
            text.starts_with("mcp-bridge: cli: error: invalid value 'a[' for '--allow-tool <GLOB>': unclosed character class; missing ']'\n"),
            "{text}"
        );
    }
}
