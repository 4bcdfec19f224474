//! Why a mapping request cannot be carried out: one error type for the
//! crate, each variant naming what was wrong (the front end maps it to
//! the option at fault).

use thiserror::Error;

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MappingError {
    // A job's torus (RMATT) and rank orders.
    #[error("expected 1 to 3 positive axis lengths (e.g. 32x32), got {0:?}")]
    TorusLengths(Vec<u32>),
    #[error("{0} nodes (or rank slots: nodes × ranks per node) is more than this tool handles (16M)")]
    TooManyNodes(u64),
    #[error("expected axis lengths like 32x32, got {0:?}")]
    TorusText(String),
    #[error("the order has {entries} entries for {ranks} ranks")]
    OrderLength { entries: usize, ranks: u32 },
    #[error("{ranks} ranks do not fit a torus of {nodes} nodes")]
    RanksExceedTorus { ranks: u32, nodes: u32 },
    #[error("rank {rank} is on node {node}, beyond the torus")]
    RankBeyond { rank: usize, node: u32 },
    #[error("rank {rank} shares node {node} with another rank")]
    RankShares { rank: usize, node: u32 },
    #[error("{ranks} ranks do not fit a torus of {nodes} nodes with {per_node} ranks per node")]
    RanksExceedSlots { ranks: u32, nodes: u32, per_node: u32 },
    #[error("rank {rank} is placed on node {node}, which already holds {per_node} ranks (the most per node)")]
    NodeFull { rank: usize, node: u32, per_node: u32 },

    // The NAS CG layout.
    #[error("class must be one of S, W, A, B, C, D, E, got {0:?}")]
    CgClass(char),
    #[error("NAS CG runs on a power-of-two number of processes, got {0}")]
    CgProcs(u32),

    // A virtual torus on a Tofu region.
    #[error("region size along {axis} must be 1..={max}, got {got}")]
    RegionSize { axis: &'static str, max: u32, got: u32 },
    #[error("region origin along {axis} must be below {limit}, got {got}")]
    RegionOrigin { axis: &'static str, limit: u32, got: u32 },
    #[error("region runs past the end of the {axis} mesh ({origin} + {size} > {length})")]
    RegionPastEnd { axis: &'static str, origin: u32, size: u32, length: u32 },
    #[error("expected a virtual torus of 1 to 3 positive lengths like 54x48x32, got {0:?}")]
    ShapeText(String),
    #[error("virtual torus mapping needs a Tofu system (X×Y×Z×2×3×2)")]
    NotTofu,
    #[error("{ranks} ranks do not fit the region's {nodes} nodes")]
    RanksExceedRegion { ranks: u64, nodes: u64 },
    /// Why a block cannot carry a virtual axis's cycle.
    #[error("{0}")]
    NoCycle(String),
    #[error("no block of the region factors {shape}: each virtual length must be a product of X, Y, Z lengths (up to {}x{}x{}) and the A, B, C lengths 2, 3, 2, each physical axis serving one virtual axis", .region[0], .region[1], .region[2])]
    NoBlock { shape: String, region: [u32; 3] },
    #[error("no block of the region avoids the {nodes} failed node(s) and {links} failed link(s), and no block one layer longer holds them all in one inner layer; try a larger region or a smaller shape")]
    FaultsUnavoidable { nodes: usize, links: usize },
}
