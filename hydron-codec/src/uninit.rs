//! Writing front to back into memory that is not initialized yet (a
//! buffer the caller allocated, such as a Python `bytes` object), so that
//! every byte is written exactly once and none is zeroed first.

use core::mem::MaybeUninit;

/// A write position in an uninitialized buffer.
pub(crate) struct Cursor<'a> {
    out: &'a mut [MaybeUninit<u8>],
    at: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `out`.
    #[inline]
    pub(crate) fn new(out: &'a mut [MaybeUninit<u8>]) -> Cursor<'a> {
        Cursor { out, at: 0 }
    }

    /// Copies `bytes` to the position and moves past them.
    ///
    /// # Panics
    ///
    /// If they do not fit: the callers compute the exact length first.
    #[inline]
    pub(crate) fn put(&mut self, bytes: &[u8]) {
        let end = self.at + bytes.len();
        self.out[self.at..end].write_copy_of_slice(bytes);
        self.at = end;
    }

    /// The bytes written so far, from the start of the buffer.
    #[inline]
    pub(crate) fn written(self) -> &'a mut [u8] {
        let done = &mut self.out[..self.at];
        // SAFETY: `put` is the only way `at` grows, and it initialized every
        // byte it moved past: all of `out[..at]` is initialized, and `u8`
        // has no invalid bit patterns.
        unsafe { done.assume_init_mut() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_front_to_back_and_returns_what_was_written() {
        let mut buf = [MaybeUninit::<u8>::uninit(); 8];
        let mut c = Cursor::new(&mut buf);
        c.put(&[1, 2]);
        c.put(&[]);
        c.put(&[3]);
        assert_eq!(c.written(), &[1, 2, 3]);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn refuses_to_write_past_the_end() {
        let mut buf = [MaybeUninit::<u8>::uninit(); 2];
        Cursor::new(&mut buf).put(&[1, 2, 3]);
    }
}
