"""azdb_jax/uci/timeman: the clock — each move's budget, the chunks a search grows in, and
the lateness kept back so that no move ends past its deadline and no game runs out of time."""

import chess
import numpy as np
import pytest

from azdb_jax.uci import protocol, timeman


def test_move_budget():
    go = protocol.Go(wtime=60000, btime=60000, winc=1000, binc=1000)
    assert timeman.move_budget(go, chess.WHITE, overhead_ms=100) == pytest.approx((2000 + 750 - 100) / 1000)
    low = protocol.Go(wtime=500, btime=500, winc=1000, binc=1000)
    assert timeman.move_budget(low, chess.BLACK, overhead_ms=100) == pytest.approx((225 - 100) / 1000)
    assert timeman.move_budget(protocol.Go(wtime=0, btime=0), chess.WHITE, overhead_ms=100) == 0.0
    assert timeman.move_budget(protocol.Go(movetime=300), chess.WHITE, overhead_ms=100) == pytest.approx(0.2)
    assert timeman.move_budget(protocol.Go(nodes=10), chess.WHITE, overhead_ms=100) is None
    assert timeman.move_budget(protocol.Go(infinite=True, wtime=10), chess.WHITE, overhead_ms=0) is None
    # movestogo 1: most of the clock, never below the reserve
    last = protocol.Go(wtime=10000, btime=10000, movestogo=1)
    assert timeman.move_budget(last, chess.WHITE, overhead_ms=0) == pytest.approx(4.5)


def test_a_game_never_runs_the_clock_out():
    # Whatever the clock, a move's budget leaves time for the rest of the game.
    for inc in (0, 100, 1000):
        left = 60000.0
        for _ in range(300):
            spent = 1000 * timeman.move_budget(protocol.Go(wtime=int(left), winc=inc), chess.WHITE, overhead_ms=0)
            left = left - spent + inc
            assert left > 0


def test_chunk_size_fits_the_deadline_and_the_node_limit():
    # 50 ms of search at 2,000 simulations/s = 100; the deadline cuts it to remaining / 1.5.
    assert timeman.chunk_size(2000.0, None) == 100
    assert timeman.chunk_size(2000.0, 1.0) == 100
    assert timeman.chunk_size(2000.0, 0.03) == 40  # 0.03 / 1.5 s = 20 ms
    assert timeman.chunk_size(2000.0, 0.0006) == 0  # one simulation (0.5 ms) needs 0.75 ms
    assert timeman.chunk_size(2000.0, 0.0008) == 1  # it fits: at least one
    assert timeman.chunk_size(2000.0, None, nodes_left=7) == 7 and timeman.chunk_size(2000.0, 5.0, nodes_left=0) == 0
    assert timeman.chunk_size(10.0, None) == 1  # slower than one simulation a chunk: one
    assert timeman.planned_simulations(2000.0, 0.5, nodes=None, capacity=10_000) == 1000
    assert timeman.planned_simulations(2000.0, 50.0, nodes=None, capacity=10_000) == 10_000
    assert timeman.planned_simulations(2000.0, 0.5, nodes=64, capacity=10_000) == 64
    assert timeman.planned_simulations(2000.0, None, nodes=None, capacity=777) == 777


def test_speed_follows_the_chunks_it_is_told():
    speed = timeman.Speed(rate=1000.0, memory=1.0)
    speed.record(100, 0.05)  # 2,000/s over a twentieth of the memory
    assert speed.rate == pytest.approx(0.95 * 1000 + 0.05 * 2000)
    for _ in range(40):  # a second of chunks at 500/s: the estimate is there
        speed.record(25, 0.05)
    assert speed.rate == pytest.approx(500.0, rel=0.15)
    speed.record(0, 0.05)
    speed.record(10, 0.0)  # nothing to learn from
    assert speed.rate == pytest.approx(500.0, rel=0.15)


def test_lag_is_what_the_clock_lost_beyond_the_budget():
    lag = timeman.Lag(window=2)
    lag.searched(protocol.Go(wtime=10_000, btime=9_000, winc=100, binc=100), chess.WHITE, 0.3)
    lag.observe(protocol.Go(wtime=9_600, btime=8_000, winc=100, binc=100), chess.WHITE)
    assert lag.values == [pytest.approx(0.2)]  # 10 s + 0.1 - 9.6 = 0.5 s spent on a 0.3 s budget
    assert lag.overhead_ms(100) == 200 and lag.overhead_ms(300) == 300
    lag.searched(protocol.Go(wtime=9_600, winc=100), chess.WHITE, 0.5)
    lag.observe(protocol.Go(wtime=9_300, winc=100), chess.WHITE)  # 0.4 s: within its budget
    assert lag.values == [pytest.approx(0.2), 0.0]
    lag.searched(protocol.Go(wtime=9_300, btime=9_000), chess.WHITE, 0.1)
    lag.observe(protocol.Go(wtime=9_000, btime=9_000), chess.BLACK)  # the other side's clock: nothing learnt
    lag.searched(protocol.Go(wtime=9_300), chess.WHITE, 0.1)
    lag.new_game()
    lag.observe(protocol.Go(wtime=5_000), chess.WHITE)  # another game: nothing learnt
    lag.searched(protocol.Go(wtime=5_000), chess.WHITE, 0.1)
    lag.observe(protocol.Go(wtime=60_000), chess.WHITE)  # the clock went up: not this game
    lag.searched(protocol.Go(movetime=100), chess.WHITE, 0.1)  # no clock: nothing to compare
    lag.observe(protocol.Go(wtime=1_000), chess.WHITE)
    assert lag.values == [pytest.approx(0.2), 0.0]
    lag.searched(protocol.Go(wtime=9_000), chess.WHITE, 0.2)
    lag.observe(protocol.Go(wtime=7_900), chess.WHITE)
    assert lag.values == [0.0, pytest.approx(0.9)] and lag.overhead_ms(100) == 900  # the window keeps two


@pytest.mark.parametrize("base, increment", [(10.0, 0.1), (60.0, 0.6), (60.0, 0.0)])
def test_the_chunk_loop_never_oversteps_a_move_or_runs_the_clock_out(base, increment):
    # The engine's loop (engine._search) with a simulated searcher whose real speed swings
    # between 1/3x and 2x of its average from one chunk to the next (other jobs on the cores),
    # 150 moves: no move ends past its deadline, and on average most of each budget is used.
    rng = np.random.default_rng(0)
    speed = timeman.Speed(rate=3000.0)
    left, shares = base * 1000.0, []
    for _ in range(150):
        budget = timeman.move_budget(protocol.Go(wtime=int(left), btime=int(left), winc=int(increment * 1000)),
                                     chess.WHITE, overhead_ms=100)
        remaining, spent = budget, 0.0
        while True:
            size = timeman.chunk_size(speed.rate, remaining)
            if size == 0:
                break
            seconds = size / (1000.0 * rng.choice([1 / 3, 1.0, 2.0]))
            speed.record(size, seconds)
            spent += seconds
            remaining -= seconds
            assert remaining > -timeman.CHUNK_SECONDS * 3  # at most a slow chunk's overshoot of the budget
        assert spent <= budget + 0.1  # within the overhead kept back
        shares.append(spent / (budget + 0.1))
        left -= 1000 * (spent + 0.02) - 1000 * increment  # 20 ms of latency on top
        assert left > 0
    assert np.mean(shares) > 0.5


def test_lateness_keeps_the_largest_recent_excess_over_the_plan():
    late = timeman.Lateness(window=3)
    assert late.value == 0.0
    late.record(100, 0.15, 1000.0)  # planned 0.1 s, took 0.15: 50 ms late
    late.record(100, 0.08, 1000.0)  # early: no excess
    assert late.value == pytest.approx(0.05)
    late.record(0, 5.0, 1000.0)  # nothing ran: says nothing about the plan
    late.record(50, 0.25, 1000.0)  # planned 0.05 s: 200 ms late
    assert late.value == pytest.approx(0.2)
    late.record(10, 0.01, 1000.0), late.record(10, 0.01, 1000.0), late.record(10, 0.01, 1000.0)
    assert late.value == 0.0  # the slow chunk left the window


def test_with_the_lateness_kept_back_no_move_ends_past_its_deadline():
    # The engine's loop with the reserve (deadline − lateness): a searcher that runs some
    # chunks at 1/3 of the speed it measured. Without the reserve a slow last chunk ends
    # past the deadline; with it, once one slow chunk has been seen (the first move of a
    # fresh engine may still see its first), no move does.
    def play(keep_back: bool):
        rng = np.random.default_rng(1)
        speed, late = timeman.Speed(rate=3000.0), timeman.Lateness()
        late_moves = []
        for move in range(100):
            budget = 0.5
            spent = 0.0
            while True:
                remaining = budget - spent - (late.value if keep_back else 0.0)
                rate = speed.rate
                size = timeman.chunk_size(rate, remaining)
                if size == 0:
                    break
                seconds = size / (3000.0 * rng.choice([1 / 3, 1.0, 1.0, 1.0]))
                speed.record(size, seconds)
                late.record(size, seconds, rate)
                spent += seconds
            late_moves.append(spent > budget)
        return late_moves

    without, with_reserve = play(False), play(True)
    assert sum(without) > 5  # the hazard is real in this model
    assert not any(with_reserve[1:]), [i for i, x in enumerate(with_reserve) if x]
