//! # tofusim-mapping
//!
//! Where ranks go. So far: the virtual 3D torus of a whole Tofu system
//! (DOMAIN.md §2.2), each virtual axis a Hamiltonian cycle of one XYZ axis
//! and one ABC axis, so that virtual-torus neighbours are physical
//! neighbours.

pub mod cycle;
pub mod virtual_torus;

pub use virtual_torus::VirtualTorus;
