"""The shared bounded memo: what it keeps, what it drops, and that threads may share it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from pbsolve.lru import LockedLRU


def test_a_kept_value_is_returned_for_its_key() -> None:
    memo: LockedLRU[str, int] = LockedLRU(2)
    memo.put("a", 1)
    assert memo.get("a") == 1 and memo.get("b") is None


def test_the_least_recently_used_entry_goes_first() -> None:
    memo: LockedLRU[str, int] = LockedLRU(2)
    memo.put("a", 1)
    memo.put("b", 2)
    memo.get("a")  # a read makes "a" the latest: "b" is now the oldest
    memo.put("c", 3)
    assert (memo.get("a"), memo.get("b"), memo.get("c")) == (1, None, 3) and len(memo) == 2


def test_putting_a_key_again_replaces_its_value_and_refreshes_it() -> None:
    memo: LockedLRU[str, int] = LockedLRU(2)
    memo.put("a", 1)
    memo.put("b", 2)
    memo.put("a", 10)
    memo.put("c", 3)
    assert (memo.get("a"), memo.get("b")) == (10, None)


def test_a_kept_none_is_told_apart_from_a_miss_by_the_default() -> None:
    memo: LockedLRU[str, int | None] = LockedLRU(2)
    missing = object()
    memo.put("infeasible", None)
    assert memo.get("infeasible", missing) is None and memo.get("unasked", missing) is missing


def test_a_size_of_zero_keeps_nothing() -> None:
    for size in (0, -3):
        memo: LockedLRU[str, int] = LockedLRU(size)
        memo.put("a", 1)
        assert memo.get("a") is None and len(memo) == 0


def test_clear_empties_the_memo() -> None:
    memo: LockedLRU[int, int] = LockedLRU(4)
    memo.put(1, 1)
    memo.clear()
    assert memo.get(1) is None and len(memo) == 0


def test_threads_sharing_the_memo_never_exceed_its_size_or_read_a_wrong_value() -> None:
    memo: LockedLRU[int, int] = LockedLRU(16)

    def work(start: int) -> list[int]:
        wrong = []
        for i in range(start, start + 2000):
            key = i % 50
            memo.put(key, key * 7)
            got = memo.get((i * 13) % 50)
            if got is not None and got != ((i * 13) % 50) * 7:
                wrong.append(i)
        return wrong

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(0, 16000, 2000)))
    assert results == [[]] * 8 and len(memo) <= 16
