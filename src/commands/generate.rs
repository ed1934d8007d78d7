//! Shell completions and man pages, generated from the clap definitions.
//! The committed copies under completions/ and man/ are checked against
//! these by a test; `LLMGW_REGENERATE=1 cargo test --test it generated` rewrites them.

use std::io::Write;

use crate::cli;
use crate::output;
use crate::{Exit, Outcome};

/// The file each shell's completions are committed as.
pub const COMPLETION_FILES: &[(clap_complete::Shell, &str)] = &[
    (clap_complete::Shell::Bash, "llmgw.bash"),
    (clap_complete::Shell::Zsh, "_llmgw"),
    (clap_complete::Shell::Fish, "llmgw.fish"),
    (clap_complete::Shell::Elvish, "llmgw.elv"),
    (clap_complete::Shell::PowerShell, "_llmgw.ps1"),
];

pub fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    use clap::CommandFactory;
    let mut cmd = cli::Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "llmgw", &mut buf);
    buf
}

/// Every man page: `llmgw.1` and one per (sub)command, as (file name, bytes).
pub fn man_pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, prefix: &str, out: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
        let name = if prefix.is_empty() { cmd.get_name().to_string() } else { format!("{prefix}-{}", cmd.get_name()) };
        let page = cmd.clone().name(name.clone());
        let mut buf = Vec::new();
        clap_mangen::Man::new(page).render(&mut buf)?;
        out.push((format!("{name}.1"), buf));
        for sub in cmd.get_subcommands() {
            if sub.get_name() != "help" {
                walk(sub, &name, out)?;
            }
        }
        Ok(())
    }
    let mut cmd = cli::Cli::command();
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, "", &mut out)?;
    Ok(out)
}

pub fn completions_command(a: &cli::CompletionsArgs) -> Outcome {
    std::io::stdout().lock().write_all(&self::completions(a.shell))?;
    Ok(Exit::Success)
}

pub fn man_command(a: &cli::ManArgs) -> Outcome {
    let pages = self::man_pages()?;
    match &a.dir {
        None => std::io::stdout().lock().write_all(&pages[0].1)?,
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            for (name, bytes) in &pages {
                output::write_file(&dir.join(name), bytes)?;
            }
        }
    }
    Ok(Exit::Success)
}
