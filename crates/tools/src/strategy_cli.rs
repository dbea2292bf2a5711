//! `trajan strategy`: which forwarding strategy governs each namespace, as
//! `nfdc strategy` does, over the NFD management protocol
//! (`strategy-choice/list`, `set`, `unset`).

use anyhow::{bail, Context};
use trajan_wire::mgmt::{decode_list, ControlParameters, Strategy, StrategyChoice};
use trajan_wire::Name;

use crate::client::{name_arg, Client, ClientArgs};
use crate::mgmt_cli::table;

/// Where NFD's strategy names live: `best-route` is short for
/// `/localhost/nfd/strategy/best-route`.
const STRATEGY_PREFIX: &str = "/localhost/nfd/strategy";

/// Arguments of `trajan strategy`.
#[derive(clap::Args, Debug, Clone)]
pub struct StrategyArgs {
    /// What to do with strategy choices.
    #[command(subcommand)]
    pub command: StrategyCommand,
    /// How to reach the forwarder (`--transport`, `--udp-ports`).
    #[command(flatten)]
    pub client: ClientArgs,
}

/// `trajan strategy` subcommands.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum StrategyCommand {
    /// List the strategy chosen for each namespace (strategy-choice/list)
    List,
    /// Choose the strategy for Interests under PREFIX (strategy-choice/set)
    Set {
        /// Name prefix the choice is for
        #[arg(value_parser = name_arg)]
        prefix: Name,
        /// best-route (cheapest next hop, the next on a Nack), multicast (every
        /// next hop) or dynamic (one next hop drawn at random, weighted against
        /// the Interests each holds pending: CCN-par's dynamic multipath); a full
        /// name such as /localhost/nfd/strategy/multicast/v=4 too
        strategy: String,
    },
    /// Remove the choice for PREFIX, which then follows its parent's (strategy-choice/unset)
    Unset {
        /// Name prefix the choice is for (not the root, which always has one)
        #[arg(value_parser = name_arg)]
        prefix: Name,
    },
}

/// The strategy name `given` stands for: a name as it is, a bare word under
/// [`STRATEGY_PREFIX`].
fn strategy_name(given: &str) -> anyhow::Result<Name> {
    let full = if given.starts_with('/') { given.to_owned() } else { format!("{STRATEGY_PREFIX}/{given}") };
    full.parse().with_context(|| format!("bad strategy name {given:?}"))
}

/// The strategy choices the forwarder lists.
fn choices(client: &mut Client) -> anyhow::Result<Vec<StrategyChoice>> {
    decode_list(&client.dataset("strategy-choice", "list")?).context("decoding strategy-choice/list")
}

/// Runs `trajan strategy`.
pub fn run(args: StrategyArgs) -> anyhow::Result<()> {
    let mut client = Client::from_args(&args.client)?;
    match args.command {
        StrategyCommand::List => {
            let choices = choices(&mut client)?;
            let rows: Vec<Vec<String>> = choices.iter().map(|choice| vec![choice.name.to_string(), choice.strategy.name.to_string()]).collect();
            print!("{}", table(&["Prefix", "Strategy"], &rows));
        }
        StrategyCommand::Set { prefix: name, strategy } => {
            let p = ControlParameters { name: Some(name.clone()), strategy: Some(Strategy { name: strategy_name(&strategy)? }), ..Default::default() };
            let r = client.command_ok("strategy-choice", "set", &p)?;
            println!("strategy-set prefix={name} strategy={}", r.strategy.map_or(strategy, |s| s.name.to_string()));
        }
        StrategyCommand::Unset { prefix: name } => {
            // The router answers strategy-choice/unset with 200 whether or not
            // the prefix had a choice (as NFD does): ask first, so a mistyped
            // prefix is an error rather than an "unset".
            if !choices(&mut client)?.iter().any(|c| c.name == name) {
                bail!("no strategy choice for {name} (`trajan strategy list` shows the choices)");
            }
            client.command_ok("strategy-choice", "unset", &ControlParameters { name: Some(name.clone()), ..Default::default() })?;
            println!("strategy-unset prefix={name}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_args::parse;


    #[test]
    fn short_strategy_names_expand() {
        assert_eq!(strategy_name("multicast").unwrap().to_string(), "/localhost/nfd/strategy/multicast");
        assert_eq!(strategy_name("/localhost/nfd/strategy/best-route/v=5").unwrap().to_string(), "/localhost/nfd/strategy/best-route/v=5");
    }

    #[test]
    fn parses_arguments() {
        match parse::<StrategyArgs>(&["strategy", "set", "/p", "multicast"]).unwrap().command {
            StrategyCommand::Set { prefix, strategy } => assert_eq!((prefix.to_string().as_str(), strategy.as_str()), ("/p", "multicast")),
            c => panic!("{c:?}"),
        }
        assert!(parse::<StrategyArgs>(&["strategy", "set", "/p"]).is_err(), "set needs a strategy");
        assert!(matches!(parse::<StrategyArgs>(&["strategy", "unset", "/p"]).unwrap().command, StrategyCommand::Unset { .. }));
        assert!(matches!(parse::<StrategyArgs>(&["strategy", "list"]).unwrap().command, StrategyCommand::List));
    }
}
