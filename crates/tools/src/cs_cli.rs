//! `trajan cs`: the content store's counters, its configuration (capacity,
//! admit, serve) and erasing what it holds under a prefix, as `nfdc cs` does,
//! over the NFD management protocol (`cs/info`, `cs/config`, `cs/erase`).

use std::fmt::Write as _;

use anyhow::Context;
use trajan_wire::mgmt::{decode_list, ControlParameters, CsInfo, CS_ENABLE_ADMIT, CS_ENABLE_SERVE};
use trajan_wire::Name;

use crate::client::{name_arg, Client, ClientArgs};

/// Arguments of `trajan cs`.
#[derive(clap::Args, Debug, Clone)]
pub struct CsArgs {
    /// What to do with the content store.
    #[command(subcommand)]
    pub command: CsCommand,
    /// How to reach the forwarder (`--transport`, `--udp-ports`).
    #[command(flatten)]
    pub client: ClientArgs,
}

/// A switch given as `on` or `off`, as `nfdc cs config` takes them.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    /// Turn it on (the default for both)
    On,
    /// Turn it off; packets already cached stay
    Off,
}

/// `trajan cs` subcommands.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum CsCommand {
    /// Show the store's capacity, size, switches and hit counts (cs/info)
    Info,
    /// Change the store's configuration; what is not given stays (cs/config)
    #[command(group(clap::ArgGroup::new("change").args(["capacity", "admit", "serve"]).required(true).multiple(true)))]
    Config {
        /// Most packets the store holds; lowering it evicts the excess at once
        #[arg(long)]
        capacity: Option<u64>,
        /// Whether new Data may enter the store (off keeps what is cached)
        #[arg(long, value_enum)]
        admit: Option<Switch>,
        /// Whether the store answers Interests (off: every lookup misses and
        /// Interests go upstream, as without a cache)
        #[arg(long, value_enum)]
        serve: Option<Switch>,
    },
    /// Erase the cached Data under a prefix (cs/erase)
    Erase {
        /// Name prefix whose Data go
        #[arg(value_parser = name_arg)]
        prefix: Name,
        /// Erase at most this many packets (at least 1) [default: all under the prefix]
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        count: Option<u64>,
    },
}

/// The Flags and Mask that set the switches given and leave the others.
fn flags_and_mask(admit: Option<Switch>, serve: Option<Switch>) -> (Option<u64>, Option<u64>) {
    let (mut flags, mut mask) = (0, 0);
    for (switch, bit) in [(admit, CS_ENABLE_ADMIT), (serve, CS_ENABLE_SERVE)] {
        if let Some(s) = switch {
            mask |= bit;
            if s == Switch::On {
                flags |= bit;
            }
        }
    }
    if mask == 0 {
        (None, None)
    } else {
        (Some(flags), Some(mask))
    }
}

fn on_off(flags: u64, bit: u64) -> &'static str {
    if flags & bit != 0 {
        "on"
    } else {
        "off"
    }
}

/// The text `trajan cs info` prints.
pub fn info_text(c: &CsInfo) -> String {
    let mut s = String::from("CS information:\n");
    let mut kv = |k: &str, v: String| {
        let _ = writeln!(s, "  {k:>8}: {v}");
    };
    kv("capacity", c.capacity.to_string());
    kv("entries", c.n_cs_entries.to_string());
    kv("admit", on_off(c.flags, CS_ENABLE_ADMIT).into());
    kv("serve", on_off(c.flags, CS_ENABLE_SERVE).into());
    kv("hits", c.n_hits.to_string());
    kv("misses", c.n_misses.to_string());
    s
}

/// Runs `trajan cs`.
pub fn run(args: CsArgs) -> anyhow::Result<()> {
    let mut client = Client::from_args(&args.client)?;
    match args.command {
        CsCommand::Info => {
            let info = decode_list::<CsInfo>(&client.dataset("cs", "info")?).context("decoding cs/info")?;
            print!("{}", info_text(info.first().context("cs/info is empty")?));
        }
        CsCommand::Config { capacity, admit, serve } => {
            let (flags, mask) = flags_and_mask(admit, serve);
            let r = client.command_ok("cs", "config", &ControlParameters { capacity, flags, mask, ..Default::default() })?;
            let flags = r.flags.unwrap_or(0);
            println!(
                "cs-config-updated capacity={} admit={} serve={}",
                r.capacity.map_or("?".into(), |c| c.to_string()),
                on_off(flags, CS_ENABLE_ADMIT),
                on_off(flags, CS_ENABLE_SERVE),
            );
        }
        CsCommand::Erase { prefix: name, count } => {
            let r = client.command_ok("cs", "erase", &ControlParameters { name: Some(name.clone()), count, ..Default::default() })?;
            println!("cs-erased prefix={name} count={}", r.count.unwrap_or(0));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_args::parse;


    #[test]
    fn switches_become_flags_and_mask() {
        assert_eq!(flags_and_mask(None, None), (None, None), "no switch, no Flags: the capacity alone changes");
        assert_eq!(flags_and_mask(Some(Switch::Off), None), (Some(0), Some(1)));
        assert_eq!(flags_and_mask(None, Some(Switch::On)), (Some(2), Some(2)));
        assert_eq!(flags_and_mask(Some(Switch::On), Some(Switch::Off)), (Some(1), Some(3)));
    }

    #[test]
    fn parses_arguments_and_prints_info() {
        match parse::<CsArgs>(&["cs", "config", "--capacity", "5", "--serve", "off"]).unwrap().command {
            CsCommand::Config { capacity, admit, serve } => assert_eq!((capacity, admit, serve), (Some(5), None, Some(Switch::Off))),
            c => panic!("{c:?}"),
        }
        assert!(parse::<CsArgs>(&["cs", "config", "--admit", "maybe"]).is_err());
        assert!(parse::<CsArgs>(&["cs", "config"]).is_err(), "nothing to change: no cs-config-updated");
        assert!(matches!(parse::<CsArgs>(&["cs", "erase", "/a", "--count", "2"]).unwrap().command, CsCommand::Erase { count: Some(2), .. }));
        assert!(parse::<CsArgs>(&["cs", "erase", "/a", "--count", "0"]).is_err(), "management refuses it: so does the tool");
        assert!(parse::<CsArgs>(&["cs", "erase"]).is_err(), "erase needs a prefix");
        let text = info_text(&CsInfo { capacity: 10, flags: 2, n_cs_entries: 4, n_hits: 7, n_misses: 9 });
        for line in ["capacity: 10", "entries: 4", "admit: off", "serve: on", "hits: 7", "misses: 9"] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }
}
