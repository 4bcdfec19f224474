//! # tofusim-mapping
//!
//! Where ranks go ([S:003], [S:001]):
//! - [`cycle`], [`virtual_torus`]: virtual 1D/2D/3D tori embedded in Tofu
//!   regions, each virtual axis a Hamiltonian cycle of physical axes, so
//!   that virtual-torus neighbours are physical neighbours;
//! - [`comm_list`], [`placement`], [`rmatt`]: RMATT's input, the costs of
//!   a rank order, and the simulated-annealing optimiser with its
//!   baselines;
//! - [`cg`]: the NAS CG communication pattern RMATT is evaluated on.

pub mod alloc;
pub mod cg;
pub mod comm_list;
pub mod cycle;
pub mod embed;
mod error;
pub mod faults;
pub mod placement;
pub mod rmatt;
pub mod virtual_torus;

pub use comm_list::{CommList, Flow};
pub use error::MappingError;
pub use placement::TorusShape;
pub use virtual_torus::VirtualTorus;
