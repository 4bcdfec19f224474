//! The nodes a workload addresses, as each topology numbers them.
//!
//! Patterns that need coordinates (transpose, tornado, a hot region, the
//! BG/L fills) run on a [`NodeSpace::Grid`] only; patterns that need only
//! node ids (uniform, all-to-all, a trace) run on every space; a dragonfly
//! adds its groups (group-shift). Which pattern runs where is
//! [`crate::PatternName::runs_on`].

use tofusim_topology::Torus;

/// The node space of a topology.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeSpace {
    /// A torus or mesh (BG/L, Tofu): nodes have coordinates, row-major
    /// with axis 0 fastest.
    Grid(Torus),
    /// A dragonfly: nodes numbered router by router, group by group,
    /// `group_nodes` to a group.
    Groups { nodes: u32, group_nodes: u32 },
    /// A fat-tree: nodes numbered leaf switch by leaf switch; no
    /// coordinates, a shift runs along the numbering.
    Numbered { nodes: u32 },
}

impl NodeSpace {
    pub fn nodes(&self) -> u32 {
        match self {
            NodeSpace::Grid(t) => t.node_count() as u32,
            NodeSpace::Groups { nodes, .. } | NodeSpace::Numbered { nodes } => *nodes,
        }
    }

    /// The torus, where nodes have coordinates.
    pub fn grid(&self) -> Option<&Torus> {
        match self {
            NodeSpace::Grid(t) => Some(t),
            _ => None,
        }
    }

    /// Nodes per dragonfly group.
    pub fn group_nodes(&self) -> Option<u32> {
        match self {
            NodeSpace::Groups { group_nodes, .. } => Some(*group_nodes),
            _ => None,
        }
    }

    /// What the space is, for messages ("a torus", "a dragonfly", …).
    pub fn label(&self) -> &'static str {
        match self {
            NodeSpace::Grid(_) => "a torus",
            NodeSpace::Groups { .. } => "a dragonfly",
            NodeSpace::Numbered { .. } => "a fat-tree",
        }
    }

    /// Axes a pattern can name: the torus's, or the one line of the
    /// numbering.
    pub fn axis_lengths(&self) -> Vec<u32> {
        match self {
            NodeSpace::Grid(t) => t.lengths(),
            _ => vec![self.nodes()],
        }
    }
}

/// The nodes that failed and those alive, for patterns that run among the
/// nodes alive ([`crate::Workload::with_failed_nodes`]).
#[derive(Clone, Debug, Default)]
pub struct Alive {
    failed: Vec<bool>,
    /// The nodes alive, in order, and each node's index among them.
    alive: Vec<u32>,
    index: Vec<u32>,
}

impl Alive {
    /// `failed` marks the failed nodes of `n`.
    pub fn new(failed: Vec<bool>) -> Self {
        let alive: Vec<u32> = (0..failed.len() as u32).filter(|&i| !failed[i as usize]).collect();
        let mut index = vec![u32::MAX; failed.len()];
        for (i, &a) in alive.iter().enumerate() {
            index[a as usize] = i as u32;
        }
        Alive { failed, alive, index }
    }

    /// Whether any node failed.
    pub fn any_failed(&self) -> bool {
        !self.failed.is_empty()
    }

    #[inline]
    pub fn is_failed(&self, node: u32) -> bool {
        !self.failed.is_empty() && self.failed[node as usize]
    }

    /// Nodes alive.
    pub fn count(&self) -> u32 {
        self.alive.len() as u32
    }

    /// The `i`-th node alive.
    pub fn node(&self, i: u32) -> u32 {
        self.alive[i as usize]
    }

    /// `node`'s index among the nodes alive.
    pub fn index_of(&self, node: u32) -> u32 {
        self.index[node as usize]
    }
}
