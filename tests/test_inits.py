"""The initialization registry (markovlib.transformer.inits): every scheme one registered function, and the same
tensors, bit for bit, as the string dispatch it replaced (tests/fixtures/inits_before_registry.py, a frozen copy)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from markovlib.transformer import inits
from markovlib.transformer.model import MarkovTransformer

_spec = importlib.util.spec_from_file_location(
    "inits_before_registry", Path(__file__).parent / "fixtures" / "inits_before_registry.py")
before = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(before)

# (scheme, model kwargs, init kwargs): every scheme, on each model it accepts, with and without given directions
CASES = [
    ("standard", {}, {}),
    ("standard", {"n_states": 2}, {}),
    ("standard", {"attention": "linear"}, {}),
    ("rank_one", {}, {}),
    ("rank_one", {"attention": None}, {}),
    ("authors_rank_one", {}, {}),
    ("guideline", {}, {}),
    ("guideline", {}, {"e": 1.5, "w": -0.5, "b": 0.1, "alpha": np.arange(1.0, 5.0), "u": np.ones(16)}),
    ("public_constants_scalar", {}, {}),
    ("guideline_authors", {}, {}),
    ("canonical", {}, {"e": 1.3, "w": -0.7}),
    ("canonical", {"attention": "linear"}, {"e": 1.3, "w": -0.7, "a": -0.4, "b": "optimal", "p": 0.2, "q": 0.3}),
    ("canonical", {"attention": None}, {"e": -0.2, "w": 2.0, "b": 0.3}),
    ("authors_submission", {"n_states": 2}, {}),
    ("authors_public", {"n_states": 2}, {}),
]


def _pair(model_kw, scheme, init_kw, std, seed):
    new = MarkovTransformer(4, 6, **model_kw)
    old = MarkovTransformer(4, 6, **model_kw)
    inits.initialize(new, scheme, std=std, seed=seed, **init_kw)
    before.initialize(old, scheme, std=std, seed=seed, **init_kw)
    return new, old


@pytest.mark.parametrize("scheme,model_kw,init_kw", CASES)
@pytest.mark.parametrize("seed", [0, 7])
def test_every_scheme_gives_the_tensors_of_the_string_dispatch(scheme, model_kw, init_kw, seed):
    new, old = _pair(model_kw, scheme, init_kw, 0.05, seed)
    old_params = dict(old.named_parameters())
    for name, prm in new.named_parameters():
        assert torch.equal(prm, old_params[name]), (scheme, name)


def test_a_shared_generator_is_consumed_as_before():
    gens = [torch.Generator().manual_seed(3) for _ in range(2)]
    for scheme in ("rank_one", "guideline", "public_constants_scalar", "authors_rank_one"):
        a, b = MarkovTransformer(4, 6), MarkovTransformer(4, 6)
        inits.initialize(a, scheme, generator=gens[0])
        before.initialize(b, scheme, generator=gens[1])
        assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters())), scheme
    assert torch.equal(torch.rand(3, generator=gens[0]), torch.rand(3, generator=gens[1]))


def test_registry_holds_one_function_per_scheme_in_order():
    assert inits.INITS == before.INITS
    assert set(inits.SCHEMES) == set(inits.INITS)
    assert all(callable(fn) and fn.__doc__ for fn in inits.SCHEMES.values())
    assert set(inits.TWO_TOKEN_INITS) <= set(inits.SCHEMES)


def test_unknown_scheme_names_the_argument_and_the_registered_names():
    with pytest.raises(ValueError, match=r"scheme must be one of .*'authors_public'.*'standard'"):
        inits.initialize(MarkovTransformer(4, 6), "no_such_scheme", seed=0)
    with pytest.raises(ValueError, match="init must be one of"):
        inits.canonical_scheme(3, "init")


@pytest.mark.parametrize("scheme,model_kw,init_kw,match", [
    ("rank_one", {"n_states": 2}, {}, "binary model only"),
    ("authors_public", {}, {}, "needs n_states=2"),
    ("canonical", {}, {"e": 1.0}, "needs the canonical scalars"),
    ("canonical", {}, {"e": 1.0, "w": -1.0, "a": 0.5}, "needs attention='linear'"),
    ("canonical", {}, {"e": 1.0, "w": -1.0, "b": "optimal"}, "needs the chain parameters"),
    ("guideline", {}, {"e": 0.1, "w": 1.0}, "must satisfy w < 0"),
    ("guideline", {}, {"alpha": np.zeros(4)}, "alpha must be a nonzero vector"),
    ("guideline", {}, {"u": -np.ones(16)}, "u must be a nonzero vector"),
    ("standard", {}, {"std": 0.0}, "std"),
])
def test_bad_input_raises_as_before(scheme, model_kw, init_kw, match):
    for module in (inits, before):
        with pytest.raises(ValueError, match=match):
            module.initialize(MarkovTransformer(4, 6, **model_kw), scheme, seed=0, **init_kw)


def test_global_generator_untouched():
    state = torch.get_rng_state()
    inits.initialize(MarkovTransformer(4, 6), "rank_one")
    assert torch.equal(state, torch.get_rng_state())
