//! The communicators a collective runs over (`tofusim coll --comm`): the
//! world, or sub-communicators that run at the same time — the lines or
//! planes of the ranks' grid (`MPI_Cart_sub`), blocks of consecutive ranks
//! (`MPI_Comm_split` with colour rank / n), or one list of ranks while the
//! others take no part. Each communicator runs the collective over its own
//! members as the library would (its own algorithm choice, node leaders
//! when its members share nodes, the torus shape it has); they share the
//! machine's links, TNIs and host interfaces.

use tofusim_comm::tree::Grid;

use crate::build::Setup;
use crate::error::{ConfigError, Result};
use crate::rank_placement::{RankPlacement, Ranks};

/// Which communicators run the collective.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Communicators {
    /// Every rank, one communicator.
    #[default]
    World,
    /// One communicator per line (one axis kept) or plane (two kept) of
    /// the ranks' grid: `MPI_Cart_sub` with these axes remaining.
    Axes([bool; 3]),
    /// Consecutive blocks of this many ranks.
    Blocks(u32),
    /// One communicator of these ranks, in this order; the others idle.
    Ranks(Vec<u32>),
}

/// One communicator: its members (world ranks, communicator rank i =
/// `members[i]`) and the torus shapes its algorithm sees — of its ranks
/// when they sit one per node, of its nodes' leaders otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub members: Vec<u32>,
    pub grid: Option<Grid>,
    pub node_grid: Option<Grid>,
}

const AXES: [char; 3] = ['x', 'y', 'z'];

fn bad(message: impl std::fmt::Display) -> ConfigError {
    ConfigError::argument("comm", message)
}

const EXPECTED: &str = "expected world, the axes each communicator keeps (x, y, z, xy, xz, yz: a line or plane of the ranks' grid), blocks:N (consecutive blocks of N ranks) or ranks:LIST (e.g. ranks:0-7,16)";

impl Communicators {
    pub fn parse(text: &str) -> Result<Self> {
        let text = text.trim();
        if text.is_empty() || text == "world" {
            return Ok(Communicators::World);
        }
        if let Some(n) = text.strip_prefix("blocks:") {
            let n: u32 = n.trim().parse().map_err(|_| bad(format!("blocks:{n}: expected a whole number of ranks per block")))?;
            if n < 2 {
                return Err(bad(format!("blocks:{n}: a communicator needs at least 2 ranks")));
            }
            return Ok(Communicators::Blocks(n));
        }
        if let Some(list) = text.strip_prefix("ranks:") {
            return Ok(Communicators::Ranks(parse_ranks(list)?));
        }
        let mut keep = [false; 3];
        for c in text.chars() {
            let Some(k) = AXES.iter().position(|&a| a == c) else {
                return Err(bad(format!("{text:?}: {EXPECTED}")));
            };
            if std::mem::replace(&mut keep[k], true) {
                return Err(bad(format!("{text:?}: axis {c} named twice")));
            }
        }
        if keep == [true; 3] {
            return Ok(Communicators::World);
        }
        Ok(Communicators::Axes(keep))
    }

    /// As `--comm` spells it.
    pub fn name(&self) -> String {
        match self {
            Communicators::World => "world".into(),
            Communicators::Axes(keep) => AXES.iter().zip(keep).filter(|(_, &k)| k).map(|(a, _)| *a).collect(),
            Communicators::Blocks(n) => format!("blocks:{n}"),
            Communicators::Ranks(list) => format!("ranks:{}", ranges(list)),
        }
    }

    pub fn is_world(&self) -> bool {
        *self == Communicators::World
    }

    /// The communicators on `s` (the world's ranks as `ranks` placed
    /// them). Each has at least 2 members.
    pub fn groups(&self, s: &Setup, ranks: &Ranks) -> Result<Vec<Group>> {
        let world = s.node_of_rank.len() as u32;
        let groups = match self {
            Communicators::World => vec![Group { members: (0..world).collect(), grid: s.grid, node_grid: s.node_grid }],
            Communicators::Axes(keep) => {
                let grid = rank_grid(s, ranks).ok_or_else(|| {
                    bad(format!("{}: the ranks have no grid to take lines of (a map places them; or the system is not a torus): use blocks:N or ranks:LIST", self.name()))
                })?;
                axis_groups(s, grid, *keep)
            }
            Communicators::Blocks(n) => {
                if world % n != 0 {
                    return Err(bad(format!("blocks:{n}: {world} ranks do not split into blocks of {n}; expected a divisor of {world}")));
                }
                (0..world / n).map(|b| Group { members: (b * n..(b + 1) * n).collect(), grid: None, node_grid: None }).collect()
            }
            Communicators::Ranks(list) => {
                if let Some(&r) = list.iter().find(|&&r| r >= world) {
                    return Err(bad(format!("ranks: rank {r} is beyond the {world} ranks")));
                }
                vec![Group { members: list.clone(), grid: None, node_grid: None }]
            }
        };
        if let Some(g) = groups.iter().find(|g| g.members.len() < 2) {
            return Err(bad(format!("{}: communicators of {} rank have nothing to communicate", self.name(), g.members.len())));
        }
        Ok(groups)
    }
}

/// The ranks' grid: the communicator's torus shape with a rank per node;
/// with several per node, block placement stretches x (rank = k + ppn·x +
/// …) and cyclic stretches z (rank = node + nodes·k). A map has none.
fn rank_grid(s: &Setup, ranks: &Ranks) -> Option<Grid> {
    if matches!(ranks.placement, RankPlacement::Map(_)) {
        return None;
    }
    let mut l = s.node_grid?.lengths;
    match ranks.placement {
        RankPlacement::Block => l[0] *= ranks.per_node,
        _ => l[2] *= ranks.per_node,
    }
    (l.iter().map(|&v| v as u64).product::<u64>() == s.node_of_rank.len() as u64).then_some(Grid::new(l))
}

/// One group per line or plane of `grid`, members with the kept axes
/// varying (x fastest); each group's shapes are the kept axes' lengths of
/// the ranks' grid (when its members sit one per node) and of the nodes'.
fn axis_groups(s: &Setup, grid: Grid, keep: [bool; 3]) -> Vec<Group> {
    let packed = |l: [u32; 3]| {
        let kept: Vec<u32> = (0..3).filter(|&k| keep[k]).map(|k| l[k]).collect();
        Grid::from_shape(&kept)
    };
    let kept_axes: Vec<usize> = (0..3).filter(|&k| keep[k]).collect();
    let fixed_axes: Vec<usize> = (0..3).filter(|&k| !keep[k]).collect();
    let count = |axes: &[usize]| axes.iter().map(|&k| grid.lengths[k]).product::<u32>();
    let mut out = Vec::new();
    for f in 0..count(&fixed_axes) {
        let mut c = [0u32; 3];
        let mut rest = f;
        for &k in &fixed_axes {
            c[k] = rest % grid.lengths[k];
            rest /= grid.lengths[k];
        }
        let members: Vec<u32> = (0..count(&kept_axes))
            .map(|i| {
                let mut rest = i;
                for &k in &kept_axes {
                    c[k] = rest % grid.lengths[k];
                    rest /= grid.lengths[k];
                }
                grid.rank(c)
            })
            .collect();
        let mut nodes: Vec<u32> = members.iter().map(|&m| s.node_of_rank[m as usize]).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let one_per_node = nodes.len() == members.len();
        out.push(Group { members, grid: if one_per_node { packed(grid.lengths) } else { None }, node_grid: s.node_grid.and_then(|g| packed(g.lengths)) });
    }
    out
}

/// `0-7,16,18-20`: ranks in the order given, each once.
fn parse_ranks(list: &str) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for part in list.split(',') {
        let part = part.trim();
        let num = |t: &str| t.trim().parse::<u32>().map_err(|_| bad(format!("ranks:{list}: expected ranks and ranges like 0-7,16, found {part:?}")));
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if a > b {
            return Err(bad(format!("ranks:{list}: the range {part} runs backwards")));
        }
        if (b - a) as u64 + out.len() as u64 > 1 << 24 {
            return Err(bad(format!("ranks:{list}: more than 2^24 ranks")));
        }
        for r in a..=b {
            if !seen.insert(r) {
                return Err(bad(format!("ranks:{list}: rank {r} named twice")));
            }
            out.push(r);
        }
    }
    Ok(out)
}

/// `list` written as ranges (`0-7,16`).
fn ranges(list: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < list.len() {
        let mut j = i;
        while j + 1 < list.len() && list[j + 1] == list[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { list[i].to_string() } else { format!("{}-{}", list[i], list[j]) });
        i = j + 1;
    }
    parts.join(",")
}

/// Runs `f` on `s` seen as communicator `g`: its members' nodes as the
/// ranks, its shapes as the communicator's. `s` is itself again after.
pub fn as_group<T>(s: &mut Setup, g: &Group, f: impl FnOnce(&Setup) -> T) -> T {
    let nodes: Vec<u32> = g.members.iter().map(|&m| s.node_of_rank[m as usize]).collect();
    let world = std::mem::replace(&mut s.node_of_rank, nodes);
    let grid = std::mem::replace(&mut s.grid, g.grid);
    let node_grid = std::mem::replace(&mut s.node_grid, g.node_grid);
    let out = f(s);
    s.node_of_rank = world;
    s.grid = grid;
    s.node_grid = node_grid;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_name_round_trip() {
        for text in ["world", "x", "yz", "blocks:16", "ranks:0-7,16,18-20"] {
            assert_eq!(Communicators::parse(text).unwrap().name(), text);
        }
        assert_eq!(Communicators::parse("xyz").unwrap(), Communicators::World);
        for bad in ["w", "xx", "blocks:1", "blocks:a", "ranks:3-1", "ranks:1,1", "ranks:"] {
            assert_eq!(Communicators::parse(bad).unwrap_err().key, "comm", "{bad}");
        }
    }

    #[test]
    fn lines_of_the_rank_grid_with_one_and_several_ranks_per_node() {
        let one = Ranks::default().place(crate::build::setup("bgl:4x2x2").unwrap()).unwrap();
        let rows = Communicators::parse("x").unwrap().groups(&one, &Ranks::default()).unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[1].members, vec![4, 5, 6, 7]);
        assert_eq!(rows[1].grid.unwrap().lengths, [4, 1, 1]);
        let cols = Communicators::parse("yz").unwrap().groups(&one, &Ranks::default()).unwrap();
        assert_eq!((cols.len(), cols[0].members.clone()), (4, vec![0, 4, 8, 12]));
        // Two per node, block: x holds 8 ranks, two on each node.
        let two = Ranks::new(2, RankPlacement::Block).unwrap();
        let s = two.place(crate::build::setup("bgl:4x2x2").unwrap()).unwrap();
        let rows = Communicators::parse("x").unwrap().groups(&s, &two).unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].members, (0..8).collect::<Vec<_>>());
        assert_eq!((rows[0].grid, rows[0].node_grid.unwrap().lengths), (None, [4, 1, 1]));
        let ys = Communicators::parse("y").unwrap().groups(&s, &two).unwrap();
        assert_eq!((ys.len(), ys[0].members.clone(), ys[0].grid.unwrap().lengths), (16, vec![0, 8], [2, 1, 1]));
        assert_eq!(Communicators::parse("blocks:3").unwrap().groups(&s, &two).unwrap_err().key, "comm");
        assert_eq!(Communicators::parse("ranks:0-63,64").unwrap().groups(&s, &two).unwrap_err().key, "comm");
    }
}
