use super::*;

#[test]
fn every_built_in_recipe_loads_with_one_source_and_distinct_executables() {
    let all = recipes();
    let names: Vec<&str> = all.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "basedpyright",
            "debugpy",
            "typescript-language-server",
            "rust-analyzer",
            "gopls",
            "delve",
            "clangd",
            "lldb",
            "jdtls",
            "ruff",
            "jedi-language-server",
            "python-lsp-server",
            "biome",
            "ccls",
            "bash-language-server",
            "shellcheck",
            "yaml-language-server",
            "vscode-langservers-extracted",
            "dockerfile-language-server",
            "intelephense",
            "svelte-language-server",
            "graphql-language-service",
            "sql-language-server",
            "vim-language-server",
            "fortls",
        ]
    );
    let mut exes: Vec<&str> = all
        .iter()
        .flat_map(|r| r.bin.iter().chain(r.link.keys()).map(String::as_str))
        .collect();
    let count = exes.len();
    exes.sort_unstable();
    exes.dedup();
    assert_eq!(exes.len(), count, "an executable is provided twice");
    assert!(all.iter().all(|r| !r.source.packages().is_empty()));
}

#[test]
fn a_recipe_with_two_sources_or_an_unknown_key_is_refused_by_name() {
    let two = "[[recipe]]\nname = \"x\"\nlanguages = []\nnpm = [\"a\"]\npypi = [\"b\"]\n";
    assert_eq!(
        parse_recipes(two).unwrap_err(),
        "recipe `x` names 2 sources; give exactly one of npm, pypi, go, rustup, debian"
    );
    let unknown = "[[recipe]]\nname = \"x\"\nlanguages = []\nnpm = [\"a\"]\ncargo = [\"b\"]\n";
    assert!(parse_recipes(unknown)
        .unwrap_err()
        .contains("unknown field `cargo`"));
}

#[test]
fn languages_and_names_select_recipes_in_file_order() {
    let words = |w: &[&str]| {
        w.iter()
            .map(std::string::ToString::to_string)
            .collect::<Vec<_>>()
    };
    let picked: Vec<&str> = select(&words(&["typescript", "python", "debugpy"]))
        .unwrap()
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(
        picked,
        ["basedpyright", "debugpy", "typescript-language-server"]
    );
    assert_eq!(
        select(&words(&["python", "cobol"])).unwrap_err(),
        "nothing to install for cobol; languages: bash, c, cpp, css, dockerfile, fortran, go, graphql, html, \
         java, javascript, json, php, python, rust, sql, svelte, typescript, vim, yaml; recipes: basedpyright, debugpy, \
         typescript-language-server, rust-analyzer, gopls, delve, clangd, lldb, jdtls, ruff, \
         jedi-language-server, python-lsp-server, biome, ccls, bash-language-server, shellcheck, yaml-language-server, \
         vscode-langservers-extracted, dockerfile-language-server, intelephense, svelte-language-server, \
         graphql-language-service, sql-language-server, vim-language-server, fortls"
    );
}

#[test]
fn a_missing_program_is_told_the_install_line() {
    assert_eq!(
        install_hint("basedpyright-langserver").as_deref(),
        Some("agent-tools install basedpyright")
    );
    assert_eq!(
        install_hint("debugpy-python").as_deref(),
        Some("agent-tools install debugpy")
    );
    assert_eq!(install_hint("no-such-server"), None);
}
