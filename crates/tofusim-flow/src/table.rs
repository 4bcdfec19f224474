//! Flows stored flat: every route in one array of links, with an offset
//! per flow, instead of one `Vec` per flow. An all-to-all on 512 nodes
//! has 1.8 million route parts; one allocation each cost time to make and
//! free and about 40 bytes of allocator overhead apiece, and scattered
//! the routes the solver reads in turn.

use crate::Flow;

/// Routes and rate caps of a set of flows, numbered from 0 in the order
/// they were pushed. Flow `i` crosses `links(i)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowTable {
    /// `first[i]..first[i + 1]`: flow `i`'s range of `links`.
    first: Vec<usize>,
    links: Vec<u32>,
    cap: Vec<f64>,
}

impl FlowTable {
    pub fn new() -> Self {
        FlowTable { first: vec![0], links: Vec::new(), cap: Vec::new() }
    }

    /// Room for `flows` flows crossing `links` links in all.
    pub fn with_capacity(flows: usize, links: usize) -> Self {
        let mut first = Vec::with_capacity(flows + 1);
        first.push(0);
        FlowTable { first, links: Vec::with_capacity(links), cap: Vec::with_capacity(flows) }
    }

    /// Adds a flow over `links` with rate cap `cap` (`f64::INFINITY` for
    /// none); returns its number.
    pub fn push(&mut self, links: &[u32], cap: f64) -> usize {
        self.links.extend_from_slice(links);
        self.first.push(self.links.len());
        self.cap.push(cap);
        self.cap.len() - 1
    }

    /// Number of flows.
    pub fn len(&self) -> usize {
        self.cap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cap.is_empty()
    }

    /// The links flow `i` crosses.
    #[inline]
    pub fn links(&self, i: usize) -> &[u32] {
        &self.links[self.first[i]..self.first[i + 1]]
    }

    /// Where flow `i`'s links sit in [`Self::all_links`].
    #[inline]
    pub fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.first[i]..self.first[i + 1]
    }

    /// Every flow's links, one after the other.
    pub fn all_links(&self) -> &[u32] {
        &self.links
    }

    /// Flow `i`'s rate cap.
    #[inline]
    pub fn cap(&self, i: usize) -> f64 {
        self.cap[i]
    }

    /// The largest link number any flow crosses, plus one (0 if none).
    pub fn link_bound(&self) -> usize {
        self.links.iter().max().map_or(0, |&l| l as usize + 1)
    }

    /// Frees spare room once every flow is in.
    pub fn shrink_to_fit(&mut self) {
        self.first.shrink_to_fit();
        self.links.shrink_to_fit();
        self.cap.shrink_to_fit();
    }
}

impl From<&[Flow]> for FlowTable {
    fn from(flows: &[Flow]) -> Self {
        let mut t = FlowTable::with_capacity(flows.len(), flows.iter().map(|f| f.links.len()).sum());
        for f in flows {
            t.push(&f.links, f.cap);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_keep_their_links_and_caps_in_order() {
        let mut t = FlowTable::new();
        assert!(t.is_empty() && t.link_bound() == 0);
        assert_eq!(t.push(&[3, 1], 2.0), 0);
        assert_eq!(t.push(&[], f64::INFINITY), 1);
        assert_eq!(t.push(&[7], 0.5), 2);
        assert_eq!((t.len(), t.links(0), t.links(1), t.links(2)), (3, &[3, 1][..], &[][..], &[7][..]));
        assert_eq!((t.cap(0), t.cap(2), t.range(2), t.link_bound()), (2.0, 0.5, 2..3, 8));
        let flows = [Flow { links: vec![3, 1], cap: 2.0 }, Flow { links: vec![], cap: f64::INFINITY }, Flow { links: vec![7], cap: 0.5 }];
        assert_eq!(FlowTable::from(&flows[..]), t);
    }
}
