//! Several ranks per node: how a job's ranks are placed on the nodes of a
//! communicator (`--ppn`, `--placement`). Ranks on one node share its TNIs
//! and host interface, and a message between two of them goes through the
//! node's memory instead of the network (`tofusim_comm::exec`).

use crate::build::Setup;
use crate::error::{ConfigError, Result};

/// Most ranks a node may hold (Fugaku's A64FX has 48 compute cores; a
/// bound well above any node the presets describe).
pub const MAX_RANKS_PER_NODE: u32 = 256;

/// Where each rank goes.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum RankPlacement {
    /// Ranks `k·ppn … k·ppn + ppn − 1` on the communicator's node `k` (MPI
    /// launchers' default: consecutive ranks share a node).
    #[default]
    Block,
    /// Rank `r` on the communicator's node `r mod nodes` (round robin).
    Cyclic,
    /// Rank `r` on node `map[r]` (node ids of the system), as a map file
    /// gives them; a node may hold up to the placement's ranks per node.
    Map(Vec<u32>),
}

impl RankPlacement {
    pub const NAMES: [&'static str; 2] = ["block", "cyclic"];

    pub fn name(&self) -> &'static str {
        match self {
            RankPlacement::Block => "block",
            RankPlacement::Cyclic => "cyclic",
            RankPlacement::Map(_) => "map",
        }
    }

    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "" | "block" => Ok(RankPlacement::Block),
            "cyclic" => Ok(RankPlacement::Cyclic),
            other => Err(ConfigError::argument("placement", format!("unknown placement `{other}`; expected block, cyclic or a map (a rank's node per line)"))),
        }
    }
}

/// Ranks per node and their placement, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ranks {
    pub per_node: u32,
    pub placement: RankPlacement,
}

impl Default for Ranks {
    fn default() -> Self {
        Ranks { per_node: 1, placement: RankPlacement::Block }
    }
}

impl Ranks {
    pub fn new(per_node: u64, placement: RankPlacement) -> Result<Ranks> {
        if !(1..=MAX_RANKS_PER_NODE as u64).contains(&per_node) {
            return Err(ConfigError::argument("ppn", format!("expected 1 to {MAX_RANKS_PER_NODE} ranks per node, found {per_node}")));
        }
        Ok(Ranks { per_node: per_node as u32, placement })
    }

    /// A rank per node in the communicator's order (block or cyclic with
    /// one per node): what the rounds form and torus shapes assume.
    pub fn is_one_per_node(&self) -> bool {
        self.per_node == 1 && !matches!(self.placement, RankPlacement::Map(_))
    }

    /// `setup` (a rank per node) with its ranks placed: `per_node` on
    /// every node of the communicator, or as the map says. A communicator
    /// of several ranks per node has no torus shape (the torus-aware
    /// algorithms need a rank per node).
    pub fn place(&self, mut setup: Setup) -> Result<Setup> {
        let nodes = std::mem::take(&mut setup.node_of_rank);
        let n = nodes.len() as u64;
        let ppn = self.per_node as u64;
        let ranks = n.checked_mul(ppn).filter(|&r| r <= u32::MAX as u64).ok_or_else(|| ConfigError::argument("ppn", format!("{n} nodes x {ppn} ranks per node: more ranks than a rank number holds")))?;
        setup.node_of_rank = match &self.placement {
            RankPlacement::Block => (0..ranks).map(|r| nodes[(r / ppn) as usize]).collect(),
            RankPlacement::Cyclic => (0..ranks).map(|r| nodes[(r % n) as usize]).collect(),
            RankPlacement::Map(map) => {
                let system_nodes = setup.built.system.network.topology.node_count();
                let mut held = std::collections::HashMap::new();
                for (r, &node) in map.iter().enumerate() {
                    if node as u64 >= system_nodes {
                        return Err(ConfigError::argument("placement", format!("rank {r} is placed on node {node}, beyond the {system_nodes} nodes of the system")));
                    }
                    let k = held.entry(node).or_insert(0u64);
                    *k += 1;
                    if *k > ppn {
                        return Err(ConfigError::argument("placement", format!("node {node} holds more than {ppn} ranks (--ppn {ppn}); raise --ppn or move a rank")));
                    }
                }
                if map.len() < 2 {
                    return Err(ConfigError::argument("placement", "the map places fewer than 2 ranks"));
                }
                map.clone()
            }
        };
        if !(self.per_node == 1 && matches!(self.placement, RankPlacement::Block | RankPlacement::Cyclic)) {
            setup.grid = None;
        }
        if matches!(self.placement, RankPlacement::Map(_)) {
            // Its nodes need not be the communicator's, in its order.
            setup.node_grid = None;
        }
        Ok(setup)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_and_cyclic_place_every_rank_on_a_node_of_the_communicator() {
        let setup = || crate::build::setup("bgl:2x2x2").unwrap();
        let order = setup().node_of_rank;
        let block = Ranks::new(2, RankPlacement::Block).unwrap().place(setup()).unwrap();
        assert_eq!(block.node_of_rank.len(), 16);
        assert_eq!(&block.node_of_rank[..4], &[order[0], order[0], order[1], order[1]]);
        assert!(block.grid.is_none());
        let cyclic = Ranks::new(2, RankPlacement::Cyclic).unwrap().place(setup()).unwrap();
        assert_eq!(&cyclic.node_of_rank[..9], &[order[0], order[1], order[2], order[3], order[4], order[5], order[6], order[7], order[0]]);
        let one = Ranks::default().place(setup()).unwrap();
        assert_eq!(one.node_of_rank, order);
        assert!(one.grid.is_some(), "a rank per node keeps the torus shape");
    }

    #[test]
    fn a_map_is_checked_against_the_system_and_the_ranks_per_node() {
        let setup = || crate::build::setup("bgl:2x2x2").unwrap();
        let map = vec![3, 3, 5];
        let placed = Ranks::new(2, RankPlacement::Map(map.clone())).unwrap().place(setup()).unwrap();
        assert_eq!(placed.node_of_rank, map);
        let e = Ranks::new(1, RankPlacement::Map(map)).unwrap().place(setup()).err().unwrap().to_string();
        assert!(e.contains("node 3 holds more than 1 ranks"), "{e}");
        let e = Ranks::new(1, RankPlacement::Map(vec![0, 8])).unwrap().place(setup()).err().unwrap().to_string();
        assert!(e.contains("beyond the 8 nodes"), "{e}");
        assert!(Ranks::new(0, RankPlacement::Block).is_err());
    }
}
