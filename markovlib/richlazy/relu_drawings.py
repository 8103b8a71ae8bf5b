"""Part II's ReLU explorer, headless: one teacher-student network at (tau, alpha) (Kunin et al., NeurIPS 2024, Sec. 5).

:func:`draw_relu_training` builds the reduced Fig. 1(b) protocol (``relu_networks.teacher_student``: d = 10,
n = 100 inputs on the sphere, a teacher of 3 ReLU units, a symmetric student of width h = 50 with the paper's
(tau, alpha) initialization |a_k| = tau alpha, ||w_k|| = tau / alpha, so delta = tau^2 (alpha^2 - alpha^-2)), trains
it by full-batch gradient descent at the authors' learning rate 5e-3 / tau^2 (``relu_batch.train_networks``) and
draws over the steps (log axis): the test loss, the kernel distance S(0, t) of the NTK on the training inputs and
the Hamming distance of the activation pattern from initialization (Fig. 5b). It returns what it displays: delta,
the regime its sign names (Sec. 3: downstream delta < 0, balanced delta = 0, upstream delta > 0) and the three
metrics at the last step.

The chapter ``grq_relu_rich``'s figures: :func:`heat_rows` (Fig. 1b, Fig. 10), :func:`fig5b_figure` (Fig. 5b),
:func:`fig1a_figure` (Fig. 1a), :func:`fig9_figure` (Fig. 9, App. C.1) and :func:`horizon_figure` (the size study
to the paper's 10^5 steps), each returning its figure.
"""
from __future__ import annotations

import numpy as np

from ..book import plotting
from ..numerics import checks
from .relu_batch import train_networks
from .relu_networks import teacher_student

TAU_RANGE = (0.05, 4.0)  # the explorer's overall scales (the paper's Fig. 1b spans 0.1 to 2)
ALPHA_RANGE = (0.125, 8.0)  # relative scales: alpha < 1 downstream, 1 balanced, > 1 upstream
CHECKPOINTS = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
SIZES = dict(d=10, n=100, h=50, n_teacher=3, n_test=100)  # the reduced teacher-student task of the explorer


def delta_of(tau, alpha) -> float:
    """delta = tau^2 (alpha^2 - alpha^-2), the conserved quantity of every neuron at the (tau, alpha) init."""
    return float(tau**2 * (alpha**2 - alpha**-2))


def relu_setup(tau, alpha, seed=0):
    """Validate (tau, alpha) and draw the explorer's task: (delta, the dict of ``teacher_student`` with ``a0`` (h,)
    and ``W0`` (h, d) of the one student)."""
    tau = checks.positive_real("tau", tau)
    if not TAU_RANGE[0] <= tau <= TAU_RANGE[1]:
        raise ValueError(f"tau must lie in [{TAU_RANGE[0]:g}, {TAU_RANGE[1]:g}], got {tau!r}")
    alpha = checks.positive_real("alpha", alpha)
    if not ALPHA_RANGE[0] <= alpha <= ALPHA_RANGE[1]:
        raise ValueError(f"alpha must lie in [{ALPHA_RANGE[0]:g}, {ALPHA_RANGE[1]:g}], got {alpha!r}")
    seed = checks.nonnegative_int("seed", seed)
    delta = delta_of(tau, alpha)
    task = teacher_student(SIZES["d"], SIZES["n"], SIZES["h"], SIZES["n_teacher"], [tau], [delta], seed,
                           n_test=SIZES["n_test"])
    task["a0"], task["W0"] = task["a0"][0, 0], task["W0"][0, 0]
    return delta, task


def regime(delta) -> str:
    """The regime the sign of delta names at initialization (Sec. 3)."""
    return "upstream" if delta > 0 else ("balanced" if delta == 0 else "downstream")


def outcome_text(delta, test_loss, kernel_distance, hamming) -> str:
    """The readout of a frame: coarse enough to be the same on every machine (training results)."""
    from ..book.formatting import fixed

    return (f"delta {delta:.3g} ({regime(delta)}); at the last step: test loss {fixed(test_loss, 3)}, "
            f"S(0, T) {fixed(kernel_distance, 3)}, Hamming {fixed(hamming, 3)}")


def draw_relu_training(tau, alpha, fig=None, *, seed=0, steps=1000, base_lr=5e-3) -> dict:
    """Train the explorer's network at overall scale ``tau`` in [0.05, 4] and relative scale ``alpha`` in
    [1/8, 8] for ``steps`` in [10, 5000] GD steps at lr = ``base_lr`` / tau^2, and draw its test loss, kernel
    distance S(0, t) and Hamming distance over the steps (log axis, from step 1).

    Returns {"tau", "alpha", "delta", "regime", "steps": the checkpoints, "test_loss", "kernel_distance",
    "hamming": the curves at the checkpoints, "test_loss_end", "kernel_distance_end", "hamming_end",
    "finite": the run did not overflow, "text": :func:`outcome_text`}.
    """
    import matplotlib.pyplot as plt

    delta, task = relu_setup(tau, alpha, seed)
    tau, alpha = float(tau), float(alpha)
    steps = checks.positive_int("steps", steps)
    if not 10 <= steps <= 5000:
        raise ValueError(f"steps must be an integer in [10, 5000], got {steps!r}")
    base_lr = checks.positive_real("base_lr", base_lr)
    if base_lr > 0.05:
        raise ValueError(f"base_lr must lie in (0, 0.05] (the paper's 5e-3), got {base_lr!r}")
    ck = sorted({s for s in CHECKPOINTS if s < steps} | {steps})
    run = train_networks(task["X"], task["y"], task["a0"], task["W0"], base_lr / tau**2, ck,
                         X_test=task["X_test"], y_test=task["y_test"])
    finite = bool(run["finite"])
    curves = {m: np.asarray(run[m], float) for m in ("test_loss", "kernel_distance", "hamming")}
    ends = {m + "_end": float(v[-1]) for m, v in curves.items()}
    text = outcome_text(delta, ends["test_loss_end"], ends["kernel_distance_end"], ends["hamming_end"])

    if fig is None:
        fig = plt.figure(figsize=(8.0, 3.75))
    axes = fig.subplots(1, 3, gridspec_kw=dict(left=0.08, right=0.98, top=0.8, bottom=0.16, wspace=0.42))
    col = {"downstream": plotting.LOCAL, "balanced": plotting.GLOBAL, "upstream": plotting.SADDLE}[regime(delta)]
    t = np.asarray(ck)[1:]
    labels = {"test_loss": "test loss", "kernel_distance": "kernel distance $S(0, t)$",
              "hamming": "Hamming distance to $t = 0$"}
    for ax, (m, y) in zip(axes, curves.items()):
        ax.plot(t, y[1:], "o-", color=col, ms=3, lw=1.4)
        ax.set_xscale("log")
        ax.set_xlabel("GD step", fontsize=8)
        ax.set_ylabel(labels[m], fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].axhline(curves["test_loss"][0], color="0.5", ls=":", lw=1, label="at init (f = 0)")
    axes[0].set_ylim(0, 1.1 * max(curves["test_loss"][0], np.nanmax(curves["test_loss"])))
    axes[0].legend(fontsize=7)
    axes[1].set_ylim(-0.01, max(0.3, 1.1 * np.nanmax(curves["kernel_distance"])))
    axes[2].set_ylim(-0.01, max(0.5, 1.1 * np.nanmax(curves["hamming"])))
    fig.suptitle(f"$\\tau = {tau:g}$, $\\alpha = {alpha:g}$: $\\delta = \\tau^2(\\alpha^2 - \\alpha^{{-2}}) = "
                 f"{delta:.3g}$ ({regime(delta)}); lr $= {base_lr:g}/\\tau^2$, {steps} steps\n"
                 f"end: test loss {ends['test_loss_end']:.3f}, $S(0, T)$ = {ends['kernel_distance_end']:.3f}, "
                 f"Hamming {ends['hamming_end']:.3f}", fontsize=9)
    return {"tau": tau, "alpha": alpha, "delta": delta, "regime": regime(delta), "steps": np.asarray(ck),
            **curves, **ends, "finite": finite, "text": text}


def recompute_frames(taus, alphas, *, seed=0, steps=1000, base_lr=5e-3) -> dict:
    """A second computation of the explorer's frames over the grid ``taus`` x ``alphas``: the same draws
    (:func:`markovlib.richlazy.relu_networks.teacher_student`), trained all at once by the plain
    :func:`markovlib.richlazy.relu_networks.gradient_descent` at lr = ``base_lr`` / tau^2, and the metrics at the
    last step from the weights: the test loss, the kernel distance S(0, T) of the NTK on the training inputs
    (:func:`markovlib.richlazy.minimal_model.kernel_distance` of :func:`~markovlib.richlazy.relu_networks.ntk`) and
    the Hamming distance of the activation pattern from initialization. Returns {"test_loss_end",
    "kernel_distance_end", "hamming_end"}, each of shape (len(taus), len(alphas))."""
    from .minimal_model import kernel_distance
    from .relu_networks import activation_pattern, gradient_descent, hamming_distance, mse, ntk

    taus = [checks.positive_real(f"taus[{i}]", t) for i, t in enumerate(taus)]
    alphas = [checks.positive_real(f"alphas[{i}]", a) for i, a in enumerate(alphas)]
    if not taus or not alphas:
        raise ValueError("taus and alphas must be non-empty")
    steps = checks.positive_int("steps", steps)
    base_lr = checks.positive_real("base_lr", base_lr)
    rows = [teacher_student(SIZES["d"], SIZES["n"], SIZES["h"], SIZES["n_teacher"], [t],
                            [delta_of(t, al) for al in alphas], seed, n_test=SIZES["n_test"]) for t in taus]
    X, X_test, y_test = rows[0]["X"], rows[0]["X_test"], rows[0]["y_test"]
    a0 = np.concatenate([r["a0"] for r in rows])  # (taus, alphas, h)
    W0 = np.concatenate([r["W0"] for r in rows])
    run = gradient_descent(X, rows[0]["y"], a0, W0, base_lr / np.array(taus)[:, None] ** 2, [0, steps])
    aT, WT = run["a"][-1], run["W"][-1]
    kd = np.array([[kernel_distance(ntk(X, a0[i, j], W0[i, j]), ntk(X, aT[i, j], WT[i, j]))
                    for j in range(len(alphas))] for i in range(len(taus))])
    return {"test_loss_end": mse(X_test, y_test, aT, WT), "kernel_distance_end": kd,
            "hamming_end": hamming_distance(activation_pattern(X, W0), activation_pattern(X, WT))}


def heat_map(ax, values, taus, deltas, title, cmap, vmin, vmax, log=False):
    """One (tau, delta) heat map of a grid's ``values`` (len(taus), len(deltas)), cells centred on the grid's values
    (log-spaced taus, evenly spaced deltas), tau on a log axis; colour scale [vmin, vmax] (logarithmic with ``log``).
    Returns the mesh, for a colour bar."""
    import matplotlib.colors as mcolors

    values = np.asarray(values, dtype=float)
    lt, dl = np.log10(np.asarray(taus, dtype=float)), np.asarray(deltas, dtype=float)
    if values.shape != (lt.size, dl.size) or lt.size < 2 or dl.size < 2:
        raise ValueError(f"values must have shape (len(taus), len(deltas)) with at least 2 of each, got "
                         f"{values.shape} for {lt.size} taus and {dl.size} deltas")
    edges_t = 10 ** np.concatenate([[lt[0] - (lt[1] - lt[0]) / 2], (lt[1:] + lt[:-1]) / 2,
                                    [lt[-1] + (lt[-1] - lt[-2]) / 2]])
    step_d = dl[1] - dl[0]
    edges_d = np.concatenate([dl - step_d / 2, [dl[-1] + step_d / 2]])
    norm = mcolors.LogNorm(vmin, vmax) if log else mcolors.Normalize(vmin, vmax)
    mesh = ax.pcolormesh(edges_t, edges_d, values.T, cmap=cmap, norm=norm, shading="flat")
    ax.set_xscale("log")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(r"overall scale $\tau$")
    ax.set_ylabel(r"$\delta$ (upstream > 0)")
    return mesh


def heat_rows(rows, taus, deltas, labels, suptitle, statistic="seed mean"):
    """Rows of (tau, delta) heat maps: ``rows`` is a list of (name, values (columns, tau, delta), cmap, log), one
    colour scale per row (over its positive values when ``log``), ``labels`` the column titles, ``statistic`` what
    the values are (the colour bars' label). Returns the figure."""
    import matplotlib.pyplot as plt

    if not rows or not labels:
        raise ValueError("rows and labels must be non-empty")
    fig, axes = plt.subplots(len(rows), len(labels), figsize=(3.2 * len(labels), 2.8 * len(rows)),
                             layout="constrained", squeeze=False)
    for row_axes, (name, values, cmap, log) in zip(axes, rows):
        values = np.asarray(values, dtype=float)
        if values.shape[0] != len(labels):
            raise ValueError(f"the values of {name} must have one column per label ({len(labels)}), got {values.shape}")
        pos = values[values > 0]
        vmin, vmax = (pos.min(), pos.max()) if log else (values.min(), values.max())
        for ax, lab, v in zip(row_axes, labels, values):
            mesh = heat_map(ax, v, taus, deltas, f"{name}, {lab}", cmap, vmin, vmax, log)
        fig.colorbar(mesh, ax=row_axes.tolist(), label=f"{name} ({statistic})")
    fig.suptitle(suptitle)
    return fig


def fig5b_figure(taus, deltas, hamming, pdist, steps, title):
    """Fig. 5(b): left, the seed-mean trajectories (parameter distance, Hamming distance) over the checkpoints after
    the first for downstream (first delta), balanced (middle) and upstream (last) at the smallest (solid) and the
    largest tau (dotted); right, the final Hamming and parameter distances over (tau, delta). ``hamming`` and
    ``pdist`` are (T, seeds, tau, delta). Returns the figure."""
    import matplotlib.pyplot as plt

    hamming, pdist = np.asarray(hamming, dtype=float), np.asarray(pdist, dtype=float)
    if hamming.shape != pdist.shape or hamming.ndim != 4 or hamming.shape[2:] != (len(taus), len(deltas)):
        raise ValueError(f"hamming and pdist must be (T, seeds, tau, delta) of the same shape, got {hamming.shape}, "
                         f"{pdist.shape}")
    j_up, j_bal = len(deltas) - 1, len(deltas) // 2
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2), layout="constrained")
    styles = {j_up: (plotting.GLOBAL, "upstream"), j_bal: (plotting.SADDLE, "balanced"),
              0: (plotting.LOCAL, "downstream")}
    for i, ls in ((0, "-"), (len(taus) - 1, ":")):
        for j, (col, name) in styles.items():
            axes[0].plot(pdist[1:, :, i, j].mean(1), hamming[1:, :, i, j].mean(1), ls, color=col, marker="o", ms=3,
                         label=f"{name} (delta {deltas[j]:.2f}), tau {taus[i]:.2f}")
    axes[0].set(xscale="log", xlabel="parameter distance from init (seed mean)",
                ylabel="Hamming distance of patterns (fraction)", title="trajectories over the checkpoints")
    axes[0].legend(fontsize=7)
    for ax, vals, lab in ((axes[1], hamming, "Hamming distance"), (axes[2], pdist, "parameter distance")):
        v = vals[-1].mean(0)
        fig.colorbar(heat_map(ax, v, taus, deltas, f"{lab} after {steps} steps", None, v.min(), v.max()), ax=ax)
    fig.suptitle(title)
    return fig


_KEY = "\n(dots: readout > 0 blue, < 0 red; dashed: teacher)"
FIG1A_PANELS = ((1, "Fig. 1(a) style: tau = 0.1, upstream, delta = 1" + _KEY),
                (0, "Fig. 1(a) style: tau = 0.1, downstream, delta = -1" + _KEY))


def fig1a_figure(problem, run, panels=FIG1A_PANELS, circle=0.01, teacher="--", suptitle=None):
    """Fig. 1(a) in d = 2: each student neuron as the point |a_k| w_k along the snapshots of ``run`` (a (T, 2, h),
    W (T, 2, h, 2): two runs side by side, e.g. ``relu_rich.fig1a_runs``' delta = -1 at index 0 and 1 at index 1),
    one panel per (index, title) of ``panels``, each end coloured by the sign of its readout, the teacher directions
    of ``problem`` in the line style ``teacher`` and, unless ``circle`` is None, the initialization circle of that
    radius (tau^2). Returns the figure."""
    import matplotlib.pyplot as plt

    if np.ndim(run["a"]) != 3 or np.shape(run["W"])[-1] != 2 or not panels:
        raise ValueError("run must hold snapshots a (T, 2, h) and W (T, 2, h, 2) of two-dimensional neurons")
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 5), layout="constrained", squeeze=False)
    circ = np.linspace(0, 2 * np.pi, 200)
    for ax, (j, title) in zip(axes[0], panels):
        B = np.abs(run["a"][:, j, :, None]) * run["W"][:, j]  # (T, h, 2)
        for k in range(B.shape[1]):
            ax.plot(B[:, k, 0], B[:, k, 1], color=plotting.NEUTRAL, lw=0.6, alpha=0.6)
            ax.plot(B[-1, k, 0], B[-1, k, 1], "o", ms=3,
                    color=plotting.MAXIMA if run["a"][-1, j, k] > 0 else plotting.LOCAL)
        lim = 1.15 * np.max(np.abs(B))
        for wk, ak in zip(problem["W_star"], problem["a_star"]):
            ax.plot([0, 2 * lim * wk[0]], [0, 2 * lim * wk[1]], teacher, lw=1,
                    color=plotting.MAXIMA if ak > 0 else plotting.LOCAL)
        if circle is not None:
            ax.plot(circle * np.cos(circ), circle * np.sin(circ), color="k", lw=0.8)
        ax.set(xlim=(-lim, lim), ylim=(-lim, lim), aspect="equal", title=title,
               xlabel=r"$|a_k|\,w_{k,1}$", ylabel=r"$|a_k|\,w_{k,2}$")
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def fig9_figure(surface, box, widths):
    """Fig. 9 (App. C.1): for the network with and without biases, the surface f over [-box, box]^2 coloured by the
    parity of the active neurons (3D, every second grid point), and its top view with the level sets of f.
    ``surface`` is :func:`relu_surface_checks.two_colouring`'s result. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    if not box > 0 or not all(b in surface for b in (True, False, "GX", "GY")):
        raise ValueError("surface must be two_colouring's result and box positive")
    cmap = ListedColormap(["#f0e6d2", "#5b7fa6"])  # even, odd number of active neurons
    GX, GY = surface["GX"], surface["GY"]
    fig = plt.figure(figsize=(13, 11))
    sub = slice(None, None, 2)
    for col, bias in enumerate((True, False)):
        m_ = surface[bias]
        ax = fig.add_subplot(2, 2, col + 1, projection="3d", computed_zorder=False)
        ax.plot_surface(GX[sub, sub], GY[sub, sub], m_["f"][sub, sub], facecolors=cmap(m_["parity"][sub, sub]),
                        rstride=1, cstride=1, linewidth=0, antialiased=False, shade=False)
        ax.set(xlabel="$x_1$", ylabel="$x_2$", zlabel="$f(x)$")
        ax.view_init(elev=30, azim=-60)
        ax.set_title(("with biases" if bias else "without biases") + ": the surface, coloured by parity")
        ax2 = fig.add_subplot(2, 2, col + 3)
        ax2.imshow(m_["parity"], origin="lower", extent=[-box, box, -box, box], cmap=cmap, interpolation="nearest")
        ax2.contour(GX, GY, m_["f"], levels=12, colors="k", linewidths=0.6)
        ax2.scatter([0], [0], color=plotting.LOCAL, s=25, zorder=5)
        ax2.set(xlabel="$x_1$", ylabel="$x_2$", title=f"top view: {m_['regions']} regions "
                + ("(polytopes)" if bias else "(cones from the origin, red dot)"))
    fig.suptitle(f"Paper's Fig. 9: a ReLU network with hidden widths {list(widths)} at initialization "
                 "(colour: parity of the active neurons; lines: level sets of f)")
    return fig


STORED_ROWS = {"test_loss": ("test loss", "coolwarm", True), "kernel_distance": ("kernel distance", "viridis", False),
               "hamming": ("Hamming distance", "magma", False),
               "param_distance": ("parameter distance", "cividis", False),
               "train_loss": ("train loss", "coolwarm", True)}


def stored_heat_rows(G, checkpoints, metrics, title, statistic="mean"):
    """:func:`heat_rows` of a stored grid ``G`` (``relu_checks.load_stored``): the seed means (``statistic``
    "mean") or medians ("median") of each metric in ``metrics`` (keys of :data:`STORED_ROWS`) at the stored
    ``checkpoints``. Returns the figure."""
    steps = np.asarray(G["steps"])
    if not checkpoints or any(c not in steps for c in checkpoints) or any(m not in STORED_ROWS for m in metrics):
        raise ValueError(f"checkpoints must be stored steps and metrics keys of STORED_ROWS, got {checkpoints!r}, "
                         f"{metrics!r}")
    if statistic not in ("mean", "median"):
        raise ValueError(f"statistic must be 'mean' or 'median', got {statistic!r}")
    cols = [int(np.flatnonzero(steps == c)[0]) for c in checkpoints]
    reduce = np.mean if statistic == "mean" else np.median
    rows = [(STORED_ROWS[m][0], reduce(G[m], axis=1)[cols], *STORED_ROWS[m][1:]) for m in metrics]
    return heat_rows(rows, G["taus"], G["deltas"], [f"t = {c}" for c in checkpoints], title,
                     statistic=f"seed {statistic}")


HORIZON_PANELS = (("test_loss", "test loss", True), ("train_loss", "train loss", True),
                  ("kernel_distance", "kernel distance from the initial NTK", False))


def horizon_figure(SZ, window=None, title=""):
    """A size study of one size (``relu_checks.load_stored``: metrics (1, T, seeds, delta)) over its checkpoints after
    step 0 (log axes): per delta, every seed thin and the seed median thick, for the test loss, the train loss and
    the kernel distance; ``window`` (start, end) is shaded (Fig. 10's remark). Returns the figure."""
    import matplotlib.pyplot as plt

    steps, deltas = np.asarray(SZ["steps"]), np.asarray(SZ["deltas"])
    if len(SZ["sizes"]) != 1 or steps.size < 3:
        raise ValueError(f"SZ must hold one size and at least three checkpoints, got {SZ['sizes'].tolist()}, "
                         f"{steps.size}")
    colours = {float(deltas.min()): plotting.LOCAL, 0.0: plotting.SADDLE, float(deltas.max()): plotting.GLOBAL}
    fig, axes = plt.subplots(1, len(HORIZON_PANELS), figsize=(4.6 * len(HORIZON_PANELS), 3.8), layout="constrained")
    for ax, (metric, label, log) in zip(axes, HORIZON_PANELS):
        values = np.asarray(SZ[metric][0], dtype=float)[1:]   # (T - 1, seeds, delta)
        for j, dl in enumerate(deltas):
            col = colours.get(float(dl), "0.5")
            ax.plot(steps[1:], values[:, :, j], color=col, lw=0.5, alpha=0.35)
            ax.plot(steps[1:], np.median(values[:, :, j], axis=1), color=col, lw=2.2, label=f"delta = {dl:g}")
        if window is not None:
            ax.axvspan(*window, color="0.85", zorder=0)
        ax.set(xscale="log", yscale="log" if log else "linear", xlabel="GD step", ylabel=label)
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    return fig
