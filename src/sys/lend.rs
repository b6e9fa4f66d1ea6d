//! A value that is not Sync, used by one other thread for a while: `lend` runs the borrower on a
//! thread of its own and the lender's own work beside it, and the types make sure the lender's
//! work cannot reach the value meanwhile.

/// `t` on its way to the borrowing thread.
struct Lent<'a, T: ?Sized>(&'a T);

// SAFETY: `lend` hands a `Lent` to exactly one scoped thread and joins it before it returns. On
// the lending thread meanwhile only `here` runs, which is Send: it holds no `&T` for a T that is
// not Sync, so not `t`; no other thread has a `&T` (one that is not Sync cannot be sent), so the
// borrower is the only user of `t` until it ends. (Left to the caller: no thread-local of the
// lending thread reaches `t` from `here`.)
unsafe impl<T: ?Sized> Send for Lent<'_, T> {}

/// Runs `away(t)` on a scoped thread of its own while `here()` runs on this thread, and returns
/// both results (`away`'s None when it panicked). `here` must end on its own: it should not wait
/// for `away`, which the scope joins after it.
pub fn lend<T: ?Sized, A: Send, H>(
    t: &T,
    away: impl FnOnce(&T) -> A + Send,
    here: impl FnOnce() -> H + Send,
) -> (Option<A>, H) {
    let lent = Lent(t);
    std::thread::scope(|s| {
        let borrower = s.spawn(move || {
            let lent = lent;
            away(lent.0)
        });
        let mine = here();
        (borrower.join().ok(), mine)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_value_that_is_not_sync_is_used_by_the_borrower_while_the_lender_works() {
        let count = std::cell::Cell::new(0);
        let (away, here) = super::lend(
            &count,
            |c| {
                c.set(c.get() + 1);
                std::thread::current().id()
            },
            || std::thread::current().id(),
        );
        assert_eq!(count.get(), 1);
        assert_ne!(away.unwrap(), here);
    }
}
