"""Tests of azdb_jax/classical/search.py: alpha-beta against brute-force minimax, the
Knuth-Moore minimal tree, the transposition table, limits and mates."""

import random

import chess
import pytest

from azdb_jax.classical import evaluation, search
from azdb_jax.classical.chess_position import ChessPosition
from azdb_jax.classical.gardner_position import GardnerPosition

MATE = search.MATE
PLAIN = dict(quiescence=False, endgame_tables=False)  # static evaluation at the horizon


# ---------------------------------------------------------------------------- references


class _Leaf:
    """What ``evaluation.evaluate`` reads of a chess position (its board and side to move),
    without `ChessPosition`'s hashing of the move history, which the reference has no use for."""

    def __init__(self, board: chess.Board):
        self.board, self.turn = board, board.turn


def brute_force_chess(board: chess.Board, depth: int, ply: int = 0) -> int:
    """Negamax over python-chess's rules and the classical evaluation, no pruning."""
    moves = list(board.legal_moves) if depth else []
    if not (moves or any(board.generate_legal_moves())):  # at the horizon only whether a move exists
        return -(MATE - ply) if board.is_check() else 0  # checkmate; stalemate
    if board.is_insufficient_material() or board.halfmove_clock >= 100:
        return 0
    if depth == 0:
        return evaluation.evaluate(_Leaf(board))
    best = -search.INF
    for move in moves:
        board.push(move)
        best = max(best, -brute_force_chess(board, depth - 1, ply + 1))
        board.pop()
    return best


def brute_force_gardner(position: GardnerPosition, depth: int, ply: int = 0) -> int:
    moves = position.legal_moves()
    if not moves:
        return -(MATE - ply) if position.in_check() else 0
    if position.is_insufficient_material() or position.halfmove_clock >= 100:
        return 0
    if depth == 0:
        return evaluation.evaluate(position)
    best = -search.INF
    for move in moves:
        position.push(move)
        best = max(best, -brute_force_gardner(position, depth - 1, ply + 1))
        position.pop()
    return best


def random_positions(make, count: int, seed: int, max_plies: int = 40):
    """``count`` positions reached by random legal plies (different lengths) from the start."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        position = make()
        for _ in range(rng.randrange(2, max_plies)):
            moves = position.legal_moves()
            if not moves:
                break
            position.push(rng.choice(moves))
        if position.legal_moves() and not position.is_insufficient_material():
            out.append(make_fresh(position))
    return out


def make_fresh(position):
    """The position alone (no game history), as a FEN would give it."""
    return type(position)(position.fen())


def root_value(position, depth: int, **options) -> int:
    searcher = search.Searcher(search.SearchOptions(**{**PLAIN, **options}))
    return searcher.search(position, search.Limits(depth=depth)).score


# ---------------------------------------------------------------------------- alpha-beta = minimax


@pytest.mark.parametrize("depth", [1, 2])
def test_alpha_beta_equals_brute_force_minimax_on_gardner(depth):
    for position in random_positions(GardnerPosition, 12, seed=depth):
        expected = brute_force_gardner(position.copy(), depth)
        assert root_value(position, depth) == expected, position.fen()
        assert root_value(position, depth, alpha_beta=False, transposition_table=False) == expected


def test_alpha_beta_equals_brute_force_minimax_on_gardner_depth_3():
    for position in random_positions(GardnerPosition, 6, seed=3):
        assert root_value(position, 3) == brute_force_gardner(position.copy(), 3), position.fen()


@pytest.mark.parametrize("depth", [1, 2])
def test_alpha_beta_equals_brute_force_minimax_on_chess(depth):
    for position in random_positions(ChessPosition, 6, seed=10 + depth, max_plies=30):
        expected = brute_force_chess(position.board.copy(), depth)
        assert root_value(position, depth) == expected, position.fen()


@pytest.mark.slow
@pytest.mark.parametrize("game", ["chess", "gardner_chess"])
def test_alpha_beta_equals_minimax_on_50_positions_depths_1_to_3(game):
    make, reference = ((ChessPosition, lambda p, d: brute_force_chess(p.board.copy(), d)) if game == "chess"
                       else (GardnerPosition, lambda p, d: brute_force_gardner(p.copy(), d)))
    for position in random_positions(make, 50, seed=99, max_plies=30):
        for depth in (1, 2, 3):
            assert root_value(position, depth) == reference(position, depth), (position.fen(), depth)


def test_transposition_table_keeps_the_fixed_depth_value():
    for position in random_positions(GardnerPosition, 10, seed=7) + random_positions(ChessPosition, 3, seed=8):
        for depth in (2, 3, 4) if isinstance(position, GardnerPosition) else (2, 3):
            with_tt = root_value(position, depth)
            without = root_value(position, depth, transposition_table=False)
            assert with_tt == without, (position.fen(), depth)


def test_every_ordering_and_iterative_deepening_switch_keeps_the_value():
    switches = ("iterative_deepening", "root_ordering", "tt_move", "mvv_lva", "killers", "history")
    for position in random_positions(GardnerPosition, 6, seed=21):
        value = root_value(position, 4)
        for name in switches:
            assert root_value(position, 4, **{name: False}) == value, (position.fen(), name)


# ---------------------------------------------------------------------------- Knuth and Moore


class UniformTree:
    """A uniform game tree of branching ``b`` and depth ``d`` with random distinct leaf values
    (negamax form), children sorted best-first for the side to move: perfect ordering."""

    def __init__(self, branching: int, depth: int, seed: int, order: str = "best"):
        rng = random.Random(seed)
        values = rng.sample(range(-10_000, 10_000), branching ** depth)
        self.branching, self.depth = branching, depth
        self.root = self._build(iter(values), depth, order, rng)

    def _build(self, values, depth, order, rng):
        if depth == 0:
            return (next(values), [])
        children = [self._build(values, depth - 1, order, rng) for _ in range(self.branching)]
        if order == "best":
            children.sort(key=lambda child: child[0])  # the child worst for its mover is best for us
        elif order == "worst":
            children.sort(key=lambda child: -child[0])
        return (max(-child[0] for child in children), children)


class TreePosition:
    """The search-position interface over a `UniformTree`."""

    halfmove_clock = 0
    turn = True

    def __init__(self, tree: UniformTree):
        self.path = [tree.root]
        self.key = 1
        self.history = []

    def legal_moves(self):
        return list(range(len(self.path[-1][1])))

    def has_legal_move(self):
        return True  # the tree is cut by the search depth, not by mates

    def push(self, move):
        self.history.append(self.key)
        self.path.append(self.path[-1][1][move])
        self.key = self.key * 31 + move + 1

    def pop(self):
        self.path.pop()
        self.key = self.history.pop()

    def in_check(self):
        return False

    def is_capture(self, move):
        return False

    def mvv_lva(self, move):
        return 0

    def piece_count(self):
        return 32

    def fen(self):
        return "tree"


def tree_search(tree: UniformTree, **options):
    searcher = search.Searcher(
        search.SearchOptions(**{**PLAIN, "iterative_deepening": False, "transposition_table": False, "tt_move": False,
                                "killers": False, "history": False, "mvv_lva": False, **options}),
        evaluate=lambda position: position.path[-1][0])
    return searcher.search(TreePosition(tree), search.Limits(depth=tree.depth))


@pytest.mark.parametrize("branching, depth", [(2, 1), (3, 2), (3, 3), (4, 4), (3, 5), (2, 6), (5, 3)])
def test_perfect_ordering_visits_the_knuth_moore_minimal_tree(branching, depth):
    tree = UniformTree(branching, depth, seed=branching * 10 + depth)
    result = tree_search(tree)
    assert result.score == tree.root[0]
    assert result.leaves == branching ** ((depth + 1) // 2) + branching ** (depth // 2) - 1


def test_minimax_visits_every_leaf_and_bad_ordering_costs_leaves():
    minimal = 3 ** 2 + 3 ** 2 - 1
    for seed in range(5):
        trees = {order: UniformTree(3, 4, seed=seed, order=order) for order in ("best", "random", "worst")}
        assert tree_search(trees["best"], alpha_beta=False).leaves == 3 ** 4
        leaves = {order: tree_search(tree).leaves for order, tree in trees.items()}
        assert leaves["best"] == minimal < leaves["worst"] <= 3 ** 4
        assert minimal <= leaves["random"] <= 3 ** 4
        for tree in trees.values():
            assert tree_search(tree).score == tree.root[0]


# ---------------------------------------------------------------------------- mates, limits, results


def test_finds_a_mate_in_two_and_reports_its_distance():
    # Two rooks: 1. Rh7 (cutting the king off) then mate on the 8th rank.
    position = ChessPosition("6k1/8/6K1/8/8/8/8/R6R w - - 0 1")
    result = search.Searcher().search(position, search.Limits(depth=4))
    assert search.mate_in(result.score) in (1, 2)
    board = chess.Board(position.fen())
    for move in result.pv:
        board.push(move)
    assert board.is_checkmate() and len(result.pv) == 2 * search.mate_in(result.score) - 1


def test_gardner_mate_in_one_is_found():
    position = GardnerPosition("k4/2Q2/K4/5/5 w - - 0 1")
    result = search.Searcher().search(position, search.Limits(depth=2))
    assert result.score == MATE - 1
    position.push(result.best_move)
    assert position.in_check() and not position.legal_moves()


def test_node_and_time_limits_stop_the_search_with_a_legal_move():
    position = GardnerPosition()
    by_nodes = search.Searcher().search(position, search.Limits(nodes=500))
    assert by_nodes.best_move in position.legal_moves() and 500 <= by_nodes.nodes < 600
    by_time = search.Searcher().search(position, search.Limits(time=0.05))
    assert by_time.best_move in position.legal_moves() and by_time.seconds < 1.0
    stopped = search.Searcher().search(position, search.Limits(depth=20), stop=lambda: True)
    assert stopped.best_move in position.legal_moves()
    assert position.fen() == GardnerPosition().fen() and position.history == []


def test_result_fields_are_consistent():
    position = GardnerPosition()
    result = search.Searcher().search(position, search.Limits(depth=4))
    assert result.depth == 4 and len(result.nodes_by_depth) == 4
    assert list(result.nodes_by_depth) == sorted(result.nodes_by_depth) and result.nodes_by_depth[-1] <= result.nodes
    assert set(result.root_scores) == set(position.legal_moves())
    assert result.root_scores[result.best_move] == (result.score, "exact")
    assert all(score <= result.score for score, _ in result.root_scores.values())
    assert result.pv[0] == result.best_move
    for move in result.pv:  # the PV is a legal line
        assert move in position.legal_moves()
        position.push(move)


def test_repetition_scores_a_draw():
    # Kings and a rook each: White to move repeats the position its game history already holds.
    board = chess.Board("4k3/8/8/8/8/8/r7/4K2R w - - 0 1")
    for uci in ("h1h2", "e8d8", "h2h1", "d8e8", "h1h2", "e8d8", "h2h1"):
        board.push_uci(uci)
    position = ChessPosition(board)
    searcher = search.Searcher(search.SearchOptions(**PLAIN))
    position.push(chess.Move.from_uci("d8e8"))
    assert searcher._is_repetition(position)  # pylint: disable=protected-access


def test_singular_extensions_extend_only_when_switched_on():
    position = GardnerPosition("rnbqk/p1p1p/1p1p1/PPPPP/RNBQK w - - 0 3")
    plain = search.Searcher()
    plain_result = plain.search(position, search.Limits(depth=5))
    singular = search.Searcher(search.SearchOptions(singular_extensions=True))
    singular_result = singular.search(position, search.Limits(depth=5))
    assert plain.extensions == 0 and singular.extensions > 0
    assert singular_result.best_move in position.legal_moves() and singular_result.nodes != plain_result.nodes


def test_bad_limits_and_finished_games_are_refused():
    for kwargs, word in ((dict(), "at least one"), (dict(depth=0), "depth"), (dict(nodes=-1), "nodes"),
                         (dict(time=0), "time"), (dict(depth=2.5), "depth")):
        with pytest.raises(ValueError, match=word):
            search.Limits(**kwargs)
    with pytest.raises(ValueError, match="no legal move"):
        search.Searcher().search(ChessPosition("7k/5QQ1/8/8/8/8/8/K7 b - - 0 1"), search.Limits(depth=1))
    with pytest.raises(ValueError, match="iterative deepening"):
        search.Searcher(search.SearchOptions(iterative_deepening=False)).search(GardnerPosition(),
                                                                              search.Limits(nodes=100))
    with pytest.raises(ValueError, match="tt_size"):
        search.SearchOptions(tt_size=1000)
