//! Hamiltonian cycles of P_L × P_2 and P_L × C_3 ([S:003], [S:001]), as
//! sequences of (along the long axis, along the short axis) positions.
//! They use no wrap link of the long axis, so they embed in any
//! sub-block of it.

/// P_L × P_2 (an XYZ axis with A or C): walk out on side 0 and back on
/// side 1; the two ends are joined by the short-axis link at 0.
pub fn snake(l: u32) -> Vec<(u32, u32)> {
    let mut v: Vec<(u32, u32)> = (0..l).map(|i| (i, 0)).collect();
    v.extend((0..l).rev().map(|i| (i, 1)));
    v
}

/// P_L × C_3 (an XYZ axis with B).
/// - L = 1: the B ring itself;
/// - L even: columns 1 and 2 zig-zag row by row down to (L−1, 1), then
///   (L−1, 0) and back up column 0;
/// - L odd: row 0 across, column 2 down, the B wrap link to (L−1, 0),
///   (L−1, 1), then columns 0 and 1 zig-zag back up to (1, 0).
pub fn helix(l: u32) -> Vec<(u32, u32)> {
    let mut v = Vec::with_capacity(3 * l as usize);
    if l == 1 {
        return vec![(0, 0), (0, 1), (0, 2)];
    }
    if l.is_multiple_of(2) {
        for y in 0..l {
            if y % 2 == 0 {
                v.extend([(y, 1), (y, 2)]);
            } else {
                v.extend([(y, 2), (y, 1)]);
            }
        }
        v.extend((0..l).rev().map(|y| (y, 0)));
    } else {
        v.extend([(0, 0), (0, 1), (0, 2)]);
        v.extend((1..l).map(|y| (y, 2)));
        v.extend([(l - 1, 0), (l - 1, 1)]);
        for (k, y) in (1..l - 1).rev().enumerate() {
            if k % 2 == 0 {
                v.extend([(y, 1), (y, 0)]);
            } else {
                v.extend([(y, 0), (y, 1)]);
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every position once, and consecutive ones (cyclically) one link apart.
    fn is_cycle(v: &[(u32, u32)], l: u32, short: u32, short_ring: bool) {
        assert_eq!(v.len() as u32, l * short);
        let mut seen = std::collections::HashSet::new();
        assert!(v.iter().all(|p| seen.insert(*p) && p.0 < l && p.1 < short));
        for i in 0..v.len() {
            let (a, b) = (v[i], v[(i + 1) % v.len()]);
            let dl = a.0.abs_diff(b.0);
            let ds = a.1.abs_diff(b.1);
            let ds = if short_ring { ds.min(short - ds) } else { ds };
            assert_eq!(dl + ds, 1, "{a:?} -> {b:?} (L={l})");
        }
    }

    #[test]
    fn snakes_and_helices_are_hamiltonian_cycles() {
        for l in 1..=30 {
            if l > 1 {
                is_cycle(&snake(l), l, 2, false);
            }
            is_cycle(&helix(l), l, 3, true);
        }
    }
}
