//! The little-endian writer and reader of everything that crosses
//! partitions: mailed events (the `mail` module), window reports, audit
//! parts and run summaries.


/// Appends little-endian fields to a buffer.
pub(crate) trait Put {
    fn put_u8(&mut self, x: u8);
    fn put_u16(&mut self, x: u16);
    fn put_u32(&mut self, x: u32);
    fn put_u64(&mut self, x: u64);
    fn put_f64(&mut self, x: f64) {
        self.put_u64(x.to_bits());
    }
    fn put_bytes(&mut self, b: &[u8]);
}

impl Put for Vec<u8> {
    fn put_u8(&mut self, x: u8) {
        self.push(x);
    }
    fn put_u16(&mut self, x: u16) {
        self.extend_from_slice(&x.to_le_bytes());
    }
    fn put_u32(&mut self, x: u32) {
        self.extend_from_slice(&x.to_le_bytes());
    }
    fn put_u64(&mut self, x: u64) {
        self.extend_from_slice(&x.to_le_bytes());
    }
    fn put_bytes(&mut self, b: &[u8]) {
        self.put_u64(b.len() as u64);
        self.extend_from_slice(b);
    }
}

/// Reads what [`Put`] wrote, in the same order. Reading past the end is a
/// bug in the writer, not bad input: it panics.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, at: 0 }
    }
    pub fn done(&self) -> bool {
        self.at >= self.buf.len()
    }
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let b = self.buf[self.at..self.at + N].try_into().expect("N bytes");
        self.at += N;
        b
    }
    pub fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    pub fn f64(&mut self) -> f64 {
        f64::from_bits(self.u64())
    }
    pub fn bytes(&mut self) -> &'a [u8] {
        let n = self.u64() as usize;
        self.at += n;
        &self.buf[self.at - n..self.at]
    }
}
