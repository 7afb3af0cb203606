//! The surface lists in README.md and docs/mcp.md, checked against the tool
//! declarations ([`agent_tools::FAMILIES`]): a tool that is served but not
//! listed, listed under another tier, or listed and no longer declared fails
//! here, so the docs cannot fall behind what `tools/list` serves.

use agent_tools::FAMILIES;
use std::collections::BTreeSet;
use std::path::Path;
use tool_core::Tier;

fn page(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every declared tool of `tier` (all families, compiled in or not: the docs
/// describe the full build).
fn declared(tier: Tier) -> BTreeSet<String> {
    FAMILIES
        .iter()
        .flat_map(|f| f.tools)
        .filter(|t| t.tier == tier)
        .map(|t| t.name.to_string())
        .collect()
}

fn all_declared() -> BTreeSet<String> {
    [Tier::Read, Tier::Write, Tier::Exec]
        .into_iter()
        .flat_map(declared)
        .collect()
}

/// The declared tools a piece of text names in backticks; `vibe_*` stands
/// for every tool whose name starts with `vibe_`.
fn named(text: &str) -> BTreeSet<String> {
    let all = all_declared();
    text.split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|word| match word.strip_suffix('*') {
            Some(prefix) => all
                .iter()
                .filter(|n| n.starts_with(prefix))
                .cloned()
                .collect::<Vec<_>>(),
            None => all.iter().filter(|n| *n == word).cloned().collect(),
        })
        .collect()
}

/// The cells of the table row of `text` whose first cell is `first`.
fn row<'a>(text: &'a str, first: &str) -> Vec<&'a str> {
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("| {first} |")))
        .unwrap_or_else(|| panic!("no table row `| {first} |`"));
    line.trim_matches('|').split(" | ").map(str::trim).collect()
}

#[test]
fn the_readme_tiers_table_names_every_tool_of_each_tier() {
    let readme = page("README.md");
    for (first, tier) in [
        ("read", Tier::Read),
        ("write", Tier::Write),
        ("exec", Tier::Exec),
    ] {
        let cells = row(&readme, first);
        assert_eq!(
            named(cells.last().unwrap()),
            declared(tier),
            "README.md, the tiers table's {first} row"
        );
    }
}

#[test]
fn the_mcp_surface_table_adds_each_tiers_tools() {
    let doc = page("docs/mcp.md");
    for (first, tier) in [
        ("`read`", Tier::Read),
        ("`write`", Tier::Write),
        ("`exec` (default)", Tier::Exec),
    ] {
        let cells = row(&doc, first);
        assert_eq!(
            named(cells[1]),
            declared(tier),
            "docs/mcp.md, the surface table's {first} row"
        );
    }
}

#[test]
fn the_readme_tools_table_names_every_declared_tool() {
    let readme = page("README.md");
    let section = readme
        .split("\n## The tools\n")
        .nth(1)
        .expect("a `## The tools` section")
        .split("\n## ")
        .next()
        .unwrap();
    let listed: BTreeSet<String> = section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| named(l.split(" | ").next().unwrap()))
        .collect();
    assert_eq!(listed, all_declared(), "README.md, `## The tools`");
}
