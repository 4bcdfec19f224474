//! Typed identifiers. A node of a direct network (torus, Tofu) is its own
//! router; in indirect networks (dragonfly, fat-tree) nodes hang off routers.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct NodeId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct RouterId(pub u32);

/// Index of a network port within a router (0-based, per topology layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct PortId(pub u8);

impl NodeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl RouterId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
