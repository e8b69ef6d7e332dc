#!/usr/bin/env python3
"""Test models of tests/unit/test_ml.c: ai.onnx.ml operators checked against scikit-learn.

Every model is trained by scikit-learn (Debian's python3-sklearn 1.2) on small built-in data
with fixed seeds and exported to ONNX by hand with onnx.helper (skl2onnx is not used): the
attribute mapping from the fitted parameters is written out below. The expected outputs are
scikit-learn's own predict / predict_proba / decision_function / transform results.

The ml_ort_* models carry the operator tests of ONNX Runtime (onnxruntime/test/providers/cpu/
ml/*_test.cc) with their expected values, which pin ONNX Runtime's exact semantics (binary
classifiers, aggregates, liblinear mode); the ml_bad_* models are malformed and must be
rejected with a message (their inputs are zeros [2, 3]; the expected messages are listed in
the test, as this script prints them).

Each model NAME gives tests/data/ml_NAME.onnx and tests/data/ml_NAME.npz holding
    in_<input>                     input tensors
    mapin_<input>_keys/_values     a map input (keys and values arrays)
    out_<output>                   expected tensors
    seqmap_<output>_keys/_values   an expected sequence of maps: the keys, and one row of
                                   values per map

Run with Debian's python (numpy, onnx 1.12, sklearn): /usr/bin/python3 tests/data/make_ml_models.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from scipy.special import expit
from sklearn.datasets import load_diabetes, load_iris, make_classification, make_regression
from sklearn.ensemble import (GradientBoostingClassifier, GradientBoostingRegressor,
                              RandomForestClassifier)
from sklearn.feature_extraction import DictVectorizer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.preprocessing import Binarizer, LabelEncoder, Normalizer, OneHotEncoder, StandardScaler
from sklearn.svm import SVC, SVR, LinearSVR, OneClassSVM

OUT = os.path.dirname(os.path.abspath(__file__))
ML = "ai.onnx.ml"
F, D, I64, S = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.STRING


# ------------------------------------------------------------------------------------ helpers

def tensor_info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def map_info(name, key_type, value_type):
    t = onnx.TypeProto()
    t.map_type.key_type = key_type
    t.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(value_type, None))
    return helper.make_value_info(name, t)


def seq_map_info(name, key_type):
    m = onnx.TypeProto()
    m.map_type.key_type = key_type
    m.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(F, None))
    s = onnx.TypeProto()
    s.sequence_type.elem_type.CopyFrom(m)
    return helper.make_value_info(name, s)


def node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, domain=ML, **attrs)


def floats(v):
    return [float(x) for x in np.asarray(v, dtype=np.float64).ravel()]


def ints(v):
    return [int(x) for x in np.asarray(v).ravel()]


def save(name, nodes, inputs, outputs, arrays, ml_opset=3, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, producer_name="make_ml_models.py",
                              opset_imports=[helper.make_opsetid("", 17),
                                             helper.make_opsetid(ML, ml_opset)])
    model.ir_version = 8
    onnx.save(model, os.path.join(OUT, f"ml_{name}.onnx"))
    if arrays is not None:
        arrays = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
        np.savez_compressed(os.path.join(OUT, f"ml_{name}.npz"), **arrays)


def f32_down(t):
    """The largest float32 <= t: scikit-learn compares float32 features with float64
    thresholds, so `x <= t` equals `x <= f32_down(t)` for every float32 x."""
    f = np.float32(t)
    if float(f) > t:
        f = np.nextafter(f, np.float32(-np.inf))
    return float(f)


def split(n, n_test, seed):
    p = np.random.RandomState(seed).permutation(n)
    return p[n_test:], p[:n_test]


def iris():
    d = load_iris()
    tr, te = split(len(d.target), 30, 0)
    X = d.data.astype(np.float32)
    return X[tr], d.target[tr], X[te], d.target[te], d.target_names


def diabetes():
    d = load_diabetes()
    tr, te = split(len(d.target), 30, 1)
    X = d.data.astype(np.float32)
    return X[tr], d.target[tr], X[te], d.target[te]


# ------------------------------------------------------------------------- linear models

def make_logreg():
    Xtr, ytr, Xte, _, _ = iris()
    multi = LogisticRegression(max_iter=2000, random_state=0).fit(Xtr, ytr)
    ovr = LogisticRegression(multi_class="ovr", max_iter=2000, random_state=0).fit(Xtr, ytr)
    nodes = [node("LinearClassifier", ["X"], ["label", "probabilities"],
                  coefficients=floats(multi.coef_), intercepts=floats(multi.intercept_),
                  classlabels_ints=ints(multi.classes_), multi_class=1, post_transform="SOFTMAX"),
             node("LinearClassifier", ["X"], ["label_ovr", "scores_ovr"],
                  coefficients=floats(ovr.coef_), intercepts=floats(ovr.intercept_),
                  classlabels_ints=ints(ovr.classes_), post_transform="LOGISTIC")]
    save("logreg", nodes, [tensor_info("X", F, None)],  # any shape: the kernel checks it
         [tensor_info("label", I64, [None]), tensor_info("probabilities", F, [None, 3]),
          tensor_info("label_ovr", I64, [None]), tensor_info("scores_ovr", F, [None, 3])],
         {"in_X": Xte, "out_label": multi.predict(Xte).astype(np.int64),
          "out_probabilities": multi.predict_proba(Xte).astype(np.float32),
          "out_label_ovr": ovr.predict(Xte).astype(np.int64),
          "out_scores_ovr": expit(ovr.decision_function(Xte)).astype(np.float32)})


def make_logreg_binary():
    X, y = make_classification(n_samples=200, n_features=6, n_informative=4, random_state=0)
    X = X.astype(np.float32)
    names = np.array(["neg", "pos"])
    ys = names[y]
    m = LogisticRegression(max_iter=2000).fit(X[:170], ys[:170])
    Xte = X[170:]
    w, b = m.coef_[0], m.intercept_[0]
    d = m.decision_function(Xte)
    nodes = [  # one row of coefficients: scores [1 - d, d], label by the sign of d
        node("LinearClassifier", ["X"], ["label_raw", "scores_raw"], coefficients=floats(w),
             intercepts=[float(b)], classlabels_strings=list(m.classes_)),
        # two rows [-w, w]: logistic scores are the class probabilities
        node("LinearClassifier", ["X"], ["label", "probabilities"],
             coefficients=floats(np.concatenate([-w, w])), intercepts=[float(-b), float(b)],
             classlabels_strings=list(m.classes_), post_transform="LOGISTIC")]
    save("logreg_binary", nodes, [tensor_info("X", F, [None, 6])],
         [tensor_info("label_raw", S, [None]), tensor_info("scores_raw", F, [None, 2]),
          tensor_info("label", S, [None]), tensor_info("probabilities", F, [None, 2])],
         {"in_X": Xte, "out_label_raw": m.predict(Xte),
          "out_scores_raw": np.stack([1 - d, d], 1).astype(np.float32),
          "out_label": m.predict(Xte), "out_probabilities": m.predict_proba(Xte).astype(np.float32)})


def make_linreg():
    Xtr, ytr, Xte, _ = diabetes()
    lr = LinearRegression().fit(Xtr, ytr)
    X2, Y2 = make_regression(n_samples=120, n_features=5, n_targets=2, noise=1.0, random_state=0)
    ridge = Ridge(alpha=1.0).fit(X2[:100], Y2[:100])
    X2te = X2[100:]  # double input, converted to float by the kernel
    nodes = [node("LinearRegressor", ["X"], ["Y"], coefficients=floats(lr.coef_),
                  intercepts=[float(lr.intercept_)]),
             node("LinearRegressor", ["X2"], ["Y2"], coefficients=floats(ridge.coef_),
                  intercepts=floats(ridge.intercept_), targets=2)]
    save("linreg", nodes, [tensor_info("X", F, [None, 10]), tensor_info("X2", D, [None, 5])],
         [tensor_info("Y", F, [None, 1]), tensor_info("Y2", F, [None, 2])],
         {"in_X": Xte, "out_Y": lr.predict(Xte).reshape(-1, 1).astype(np.float32),
          "in_X2": X2te, "out_Y2": ridge.predict(X2te).astype(np.float32)})


# ----------------------------------------------------------------------------------- SVMs

def kernel_attrs(m):
    return {"kernel_type": m.kernel.upper(),
            "kernel_params": [float(m._gamma), float(m.coef0), float(m.degree)]}


def svc_attrs(m):
    """SVMClassifier attributes of a fitted SVC: libsvm's own (unflipped) dual
    coefficients and intercepts; ONNX Runtime adds rho to the decision."""
    a = dict(kernel_attrs(m), classlabels_ints=ints(m.classes_),
             vectors_per_class=ints(m.n_support_), support_vectors=floats(m.support_vectors_),
             coefficients=floats(m._dual_coef_), rho=floats(m._intercept_))
    if m.probability:
        a.update(prob_a=floats(m.probA_), prob_b=floats(m.probB_))
    return a


def make_svc():
    Xtr, ytr, Xte, yte, _ = iris()
    sc = StandardScaler().fit(Xtr)  # keeps the polynomial kernel's float32 sums well conditioned
    Xtr, Xte = sc.transform(Xtr).astype(np.float32), sc.transform(Xte).astype(np.float32)
    rbf = SVC(kernel="rbf", gamma=0.5, probability=True, random_state=0).fit(Xtr, ytr)
    poly = SVC(kernel="poly", degree=3, gamma=0.2, coef0=1.0,
               decision_function_shape="ovo").fit(Xtr, ytr)
    two = ytr > 0  # versicolor against virginica, labels 1 and 2
    lin = SVC(kernel="linear", C=0.5).fit(Xtr[two], ytr[two])
    d = lin.decision_function(Xte)
    nodes = [node("SVMClassifier", ["X"], ["label_rbf", "proba_rbf"], **svc_attrs(rbf)),
             node("SVMClassifier", ["X"], ["label_poly", "scores_poly"], **svc_attrs(poly)),
             node("SVMClassifier", ["X"], ["label_lin", "scores_lin"], **svc_attrs(lin))]
    save("svc", nodes, [tensor_info("X", F, [None, 4])],
         [tensor_info("label_rbf", I64, [None]), tensor_info("proba_rbf", F, [None, 3]),
          tensor_info("label_poly", I64, [None]), tensor_info("scores_poly", F, [None, 3]),
          tensor_info("label_lin", I64, [None]), tensor_info("scores_lin", F, [None, 2])],
         {"in_X": Xte,
          "out_label_rbf": rbf.predict(Xte).astype(np.int64),
          "out_proba_rbf": rbf.predict_proba(Xte).astype(np.float32),
          "out_label_poly": poly.predict(Xte).astype(np.int64),
          "out_scores_poly": poly.decision_function(Xte).astype(np.float32),
          "out_label_lin": lin.predict(Xte).astype(np.int64),
          # one decision d per row becomes [-d', d'] with d' = libsvm's value = -d
          "out_scores_lin": np.stack([d, -d], 1).astype(np.float32)})


def make_svr():
    Xtr, ytr, Xte, _ = diabetes()
    Xtr, ytr = Xtr[:120], ytr[:120]  # few support vectors keep the model small
    rbf = SVR(kernel="rbf", C=100.0, gamma="scale").fit(Xtr, ytr)
    sig = SVR(kernel="sigmoid", C=50.0, gamma=0.5, coef0=0.1).fit(Xtr, ytr)
    lin = LinearSVR(C=10.0, max_iter=20000, random_state=0).fit(Xtr, ytr)
    Xn = Xtr[:, :3] * 10
    oc = OneClassSVM(nu=0.2, gamma=0.5).fit(Xn)

    def svr(m, one_class=0):
        return dict(kernel_attrs(m), n_supports=len(m.support_), support_vectors=floats(m.support_vectors_),
                    coefficients=floats(m.dual_coef_), rho=floats(m.intercept_), one_class=one_class)

    nodes = [node("SVMRegressor", ["X"], ["Y_rbf"], **svr(rbf)),
             node("SVMRegressor", ["X"], ["Y_sigmoid"], **svr(sig)),
             node("SVMRegressor", ["X"], ["Y_linear"], coefficients=floats(lin.coef_),
                  rho=floats(lin.intercept_)),
             node("SVMRegressor", ["Xn"], ["Y_oneclass"], **svr(oc, 1))]
    Xnte = Xte[:, :3] * 10
    save("svr", nodes, [tensor_info("X", F, [None, 10]), tensor_info("Xn", F, [None, 3])],
         [tensor_info(n, F, [None, 1]) for n in ("Y_rbf", "Y_sigmoid", "Y_linear", "Y_oneclass")],
         {"in_X": Xte, "in_Xn": Xnte,
          "out_Y_rbf": rbf.predict(Xte).reshape(-1, 1).astype(np.float32),
          "out_Y_sigmoid": sig.predict(Xte).reshape(-1, 1).astype(np.float32),
          "out_Y_linear": lin.predict(Xte).reshape(-1, 1).astype(np.float32),
          "out_Y_oneclass": oc.predict(Xnte).reshape(-1, 1).astype(np.float32)})


# ---------------------------------------------------------------------------------- trees

class V3Trees:
    """nodes_* and class_*/target_* attributes of TreeEnsembleClassifier/Regressor."""

    def __init__(self, threshold=f32_down):
        self.threshold = threshold
        self.n = {k: [] for k in ("treeids", "nodeids", "featureids", "values", "modes",
                                  "truenodeids", "falsenodeids")}
        self.w = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}

    def add(self, tree, tree_id, leaf_votes):
        """leaf_votes(i) -> [(target, weight)] for leaf i."""
        t = tree.tree_
        for i in range(t.node_count):
            leaf = t.children_left[i] == -1
            self.n["treeids"].append(tree_id)
            self.n["nodeids"].append(i)
            self.n["featureids"].append(0 if leaf else int(t.feature[i]))
            self.n["values"].append(0.0 if leaf else self.threshold(t.threshold[i]))
            self.n["modes"].append("LEAF" if leaf else "BRANCH_LEQ")
            self.n["truenodeids"].append(0 if leaf else int(t.children_left[i]))
            self.n["falsenodeids"].append(0 if leaf else int(t.children_right[i]))
            if leaf:
                for target, weight in leaf_votes(t, i):
                    self.w["treeids"].append(tree_id)
                    self.w["nodeids"].append(i)
                    self.w["ids"].append(int(target))
                    self.w["weights"].append(float(weight))

    def attrs(self, prefix, as_tensor=False):
        a = {f"nodes_{k}": self.n[k] for k in self.n if k != "values"}
        a[f"{prefix}_treeids"] = self.w["treeids"]
        a[f"{prefix}_nodeids"] = self.w["nodeids"]
        a[f"{prefix}_ids"] = self.w["ids"]
        if as_tensor:
            a["nodes_values_as_tensor"] = numpy_helper.from_array(np.array(self.n["values"]), "v")
            a[f"{prefix}_weights_as_tensor"] = numpy_helper.from_array(np.array(self.w["weights"]), "w")
        else:
            a["nodes_values"] = [float(v) for v in self.n["values"]]
            a[f"{prefix}_weights"] = self.w["weights"]
        return a


class V5Trees:
    """Attributes of TreeEnsemble (opset 5): branches and leaves in separate tables."""

    def __init__(self, dtype, threshold=f32_down):
        self.dtype, self.threshold = dtype, threshold
        self.n = {k: [] for k in ("featureids", "splits", "modes", "truenodeids", "trueleafs",
                                  "falsenodeids", "falseleafs")}
        self.leaf_targetids, self.leaf_weights, self.roots = [], [], []

    def _leaf(self, target, weight):
        self.leaf_targetids.append(int(target))
        self.leaf_weights.append(float(weight))
        return len(self.leaf_weights) - 1

    def _branch(self, feature, split, t, t_leaf, f, f_leaf):
        for k, v in zip(self.n, (feature, split, 0, t, t_leaf, f, f_leaf)):
            self.n[k].append(v)
        return len(self.n["featureids"]) - 1

    def add_constant(self, target, weight):
        """A single-leaf tree: one branch whose both sides reach the same leaf."""
        leaf = self._leaf(target, weight)
        self.roots.append(self._branch(0, 0.0, leaf, 1, leaf, 1))

    def add(self, tree, target, leaf_weight):
        t = tree.tree_
        if t.children_left[0] == -1:
            return self.add_constant(target, leaf_weight(t, 0))
        pos = {}
        branches = [i for i in range(t.node_count) if t.children_left[i] != -1]
        base = len(self.n["featureids"])
        for k, i in enumerate(branches):
            pos[i] = (base + k, 0)
        for i in range(t.node_count):
            if t.children_left[i] == -1:
                pos[i] = (self._leaf(target, leaf_weight(t, i)), 1)
        for i in branches:
            (tn, tl), (fn, fl) = pos[t.children_left[i]], pos[t.children_right[i]]
            self._branch(int(t.feature[i]), self.threshold(t.threshold[i]), tn, tl, fn, fl)
        self.roots.append(pos[0][0])

    def attrs(self, n_targets, aggregate=1, post_transform=0):
        """aggregate: 0 AVERAGE, 1 SUM, 2 MIN, 3 MAX; post_transform: 0 NONE, 1 SOFTMAX,
        2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT (the specification's numbering)."""
        a = {f"nodes_{k}": self.n[k] for k in self.n if k not in ("splits", "modes")}
        a["nodes_splits"] = numpy_helper.from_array(np.array(self.n["splits"], dtype=self.dtype), "s")
        a["nodes_modes"] = numpy_helper.from_array(np.array(self.n["modes"], dtype=np.uint8), "m")
        a["leaf_weights"] = numpy_helper.from_array(np.array(self.leaf_weights, dtype=self.dtype), "w")
        a["leaf_targetids"] = self.leaf_targetids
        a["tree_roots"] = self.roots
        return dict(a, n_targets=n_targets, aggregate_function=aggregate, post_transform=post_transform)


def class_probs(t, i):
    v = t.value[i][0]
    return v / v.sum()


def rows_without_ties(proba, min_gap=1e-6):
    top = np.sort(proba, 1)
    return top[:, -1] - top[:, -2] > min_gap


def make_random_forest():
    Xtr, ytr, Xte, _, names = iris()
    rf = RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0).fit(Xtr, ytr)
    proba = rf.predict_proba(Xte)
    keep = rows_without_ties(proba)  # a tie's winner would depend on the summation order
    Xte, proba = Xte[keep], proba[keep]
    n = len(rf.estimators_)
    v3 = V3Trees()
    for k, est in enumerate(rf.estimators_):
        v3.add(est, k, lambda t, i: [(c, p / n) for c, p in enumerate(class_probs(t, i))])
    save("random_forest", [node("TreeEnsembleClassifier", ["X"], ["label", "probabilities"],
                                classlabels_strings=list(names), **v3.attrs("class"))],
         [tensor_info("X", F, [None, 4])],
         [tensor_info("label", S, [None]), tensor_info("probabilities", F, [None, 3])],
         {"in_X": Xte, "out_label": names[rf.predict(Xte)], "out_probabilities": proba.astype(np.float32)})
    # TreeEnsemble: a leaf votes for one target, so each tree is laid out once per class
    v5, raw = V5Trees(np.float32), V5Trees(np.float32)
    for est in rf.estimators_:
        for c in range(3):
            v5.add(est, c, lambda t, i, c=c: class_probs(t, i)[c] / n)
            raw.add(est, c, lambda t, i, c=c: class_probs(t, i)[c])
    per_tree = np.stack([est.predict_proba(Xte) for est in rf.estimators_])  # [trees, rows, classes]
    avg = per_tree.mean(0) / 3  # AVERAGE divides by all 3 x 8 trees, 8 of which vote per class
    softmax = np.exp(avg) / np.exp(avg).sum(1, keepdims=True)
    nodes = [node("TreeEnsemble", ["X"], ["Y"], **v5.attrs(3)),
             node("TreeEnsemble", ["X"], ["Y_avg_softmax"], **raw.attrs(3, aggregate=0, post_transform=1)),
             node("TreeEnsemble", ["X"], ["Y_min"], **raw.attrs(3, aggregate=2)),
             node("TreeEnsemble", ["X"], ["Y_max_logistic"], **raw.attrs(3, aggregate=3, post_transform=2))]
    save("random_forest_v5", nodes, [tensor_info("X", F, [None, 4])],
         [tensor_info(o, F, [None, 3]) for o in ("Y", "Y_avg_softmax", "Y_min", "Y_max_logistic")],
         {"in_X": Xte, "out_Y": proba.astype(np.float32), "out_Y_avg_softmax": softmax.astype(np.float32),
          "out_Y_min": per_tree.min(0).astype(np.float32),
          "out_Y_max_logistic": expit(per_tree.max(0)).astype(np.float32)}, ml_opset=5)


def make_gradient_boosting():
    Xtr, ytr, Xte, _ = diabetes()
    gb = GradientBoostingRegressor(n_estimators=20, max_depth=3, learning_rate=0.1,
                                   random_state=0).fit(Xtr, ytr)
    init = float(gb._raw_predict_init(Xte[:1])[0, 0])
    lr = gb.learning_rate

    def votes(t, i):
        return [(0, lr * t.value[i][0][0])]

    f32, f64 = V3Trees(), V3Trees(threshold=float)  # double thresholds for double input
    for k, est in enumerate(gb.estimators_[:, 0]):
        f32.add(est, k, votes)
        f64.add(est, k, votes)
    nodes = [node("TreeEnsembleRegressor", ["X"], ["Y"], n_targets=1, base_values=[init],
                  **f32.attrs("target")),
             node("TreeEnsembleRegressor", ["Xd"], ["Yd"], n_targets=1,
                  base_values_as_tensor=numpy_helper.from_array(np.array([init]), "b"),
                  **f64.attrs("target", as_tensor=True))]
    expected = gb.predict(Xte).reshape(-1, 1)
    save("gradient_boosting", nodes, [tensor_info("X", F, [None, 10]), tensor_info("Xd", D, [None, 10])],
         [tensor_info("Y", F, [None, 1]), tensor_info("Yd", F, [None, 1])],
         {"in_X": Xte, "in_Xd": Xte.astype(np.float64), "out_Y": expected.astype(np.float32),
          "out_Yd": expected.astype(np.float32)})
    # TreeEnsemble in double; the initial prediction is a single-leaf tree
    v5 = V5Trees(np.float64, threshold=float)
    for est in gb.estimators_[:, 0]:
        v5.add(est, 0, lambda t, i: lr * t.value[i][0][0])
    v5.add_constant(0, init)
    save("gradient_boosting_v5", [node("TreeEnsemble", ["X"], ["Y"], **v5.attrs(1))],
         [tensor_info("X", D, [None, 10])], [tensor_info("Y", D, [None, 1])],
         {"in_X": Xte.astype(np.float64), "out_Y": expected}, ml_opset=5)


def make_gb_classifier():
    X, y = make_classification(n_samples=230, n_features=5, n_informative=3, random_state=3)
    X = X.astype(np.float32)
    names = np.array(["no", "yes"])
    bin_ = GradientBoostingClassifier(n_estimators=15, max_depth=2, random_state=0).fit(X[:200], y[:200])
    Xte = X[200:]
    Xtr3, ytr3, Xte3, _, _ = iris()
    multi = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(Xtr3, ytr3)
    lr = bin_.learning_rate
    b = V3Trees()  # binary: one score, votes for class 0, base value = the initial log-odds
    for k, est in enumerate(bin_.estimators_[:, 0]):
        b.add(est, k, lambda t, i: [(0, lr * t.value[i][0][0])])
    m = V3Trees()  # multiclass: one tree per class and stage, base values per class
    tid = 0
    for stage in multi.estimators_:
        for c, est in enumerate(stage):
            m.add(est, tid, lambda t, i, c=c: [(c, multi.learning_rate * t.value[i][0][0])])
            tid += 1
    nodes = [node("TreeEnsembleClassifier", ["X"], ["label", "probabilities"],
                  classlabels_strings=list(names), post_transform="LOGISTIC",
                  base_values=floats(bin_._raw_predict_init(Xte[:1])[0]), **b.attrs("class")),
             node("TreeEnsembleClassifier", ["X3"], ["label3", "probabilities3"],
                  classlabels_int64s=[0, 1, 2], post_transform="SOFTMAX",
                  base_values=floats(multi._raw_predict_init(Xte3[:1])[0]), **m.attrs("class"))]
    save("gb_classifier", nodes, [tensor_info("X", F, [None, 5]), tensor_info("X3", F, [None, 4])],
         [tensor_info("label", S, [None]), tensor_info("probabilities", F, [None, 2]),
          tensor_info("label3", I64, [None]), tensor_info("probabilities3", F, [None, 3])],
         {"in_X": Xte, "out_label": names[bin_.predict(Xte)],
          "out_probabilities": bin_.predict_proba(Xte).astype(np.float32),
          "in_X3": Xte3, "out_label3": multi.predict(Xte3).astype(np.int64),
          "out_probabilities3": multi.predict_proba(Xte3).astype(np.float32)})


# --------------------------------------------------------------------------- preprocessing

def make_pipeline():
    """Imputer -> Scaler -> Normalizer on the numbers, CategoryMapper -> OneHotEncoder on a
    string column, FeatureVectorizer, LinearClassifier, LabelEncoder for the string labels
    and ZipMap of the probabilities."""
    d = load_iris()
    rs = np.random.RandomState(5)
    num = d.data.astype(np.float32).copy()
    num[rs.rand(*num.shape) < 0.1] = np.nan
    colors = np.array(["red", "green", "blue"])
    cat = colors[(d.target + rs.randint(0, 2, len(d.target))) % 3].reshape(-1, 1)
    names = d.target_names[d.target]
    tr, te = split(len(names), 30, 2)
    cat_te = cat[te].copy()
    cat_te[:3] = "purple"  # unknown category: all zeros
    imp = SimpleImputer(strategy="mean").fit(num[tr])
    sc = StandardScaler().fit(imp.transform(num[tr]))
    norm = Normalizer(norm="l2")
    ohe = OneHotEncoder(categories=[list(colors)], handle_unknown="ignore").fit(cat[tr])

    def features(n, c):
        return np.hstack([norm.transform(sc.transform(imp.transform(n))), ohe.transform(c).toarray()])

    le = LabelEncoder().fit(names[tr])
    clf = LogisticRegression(max_iter=2000).fit(features(num[tr], cat[tr]), le.transform(names[tr]))
    Xte = features(num[te], cat_te)
    k = len(colors)
    nodes = [
        node("Imputer", ["num"], ["imputed"], imputed_value_floats=floats(imp.statistics_),
             replaced_value_float=float("nan")),
        node("Scaler", ["imputed"], ["scaled"], offset=floats(sc.mean_), scale=floats(1 / sc.scale_)),
        node("Normalizer", ["scaled"], ["normed"], norm="L2"),
        node("CategoryMapper", ["cat"], ["cat_id"], cats_strings=list(colors),
             cats_int64s=list(range(k)), default_int64=-1),
        node("OneHotEncoder", ["cat_id"], ["onehot"], cats_int64s=list(range(k)), zeros=1),
        node("FeatureVectorizer", ["normed", "onehot"], ["features"], inputdimensions=[4, k]),
        node("LinearClassifier", ["features"], ["label_id", "probabilities"],
             coefficients=floats(clf.coef_), intercepts=floats(clf.intercept_),
             classlabels_ints=ints(clf.classes_), post_transform="SOFTMAX"),
        node("LabelEncoder", ["label_id"], ["label"], keys_int64s=ints(clf.classes_),
             values_strings=list(le.classes_), default_string="?"),
        node("ZipMap", ["probabilities"], ["zipped"], classlabels_strings=list(le.classes_))]
    proba = clf.predict_proba(Xte)
    save("pipeline", nodes, [tensor_info("num", F, [None, 4]), tensor_info("cat", S, [None, 1])],
         [tensor_info("label", S, [None]), tensor_info("probabilities", F, [None, 3]),
          seq_map_info("zipped", S)],
         {"in_num": num[te], "in_cat": cat_te, "out_label": le.inverse_transform(clf.predict(Xte)),
          "out_probabilities": proba.astype(np.float32),
          "seqmap_zipped_keys": le.classes_, "seqmap_zipped_values": proba.astype(np.float32)})


def make_features():
    _, _, Xte, _, _ = iris()
    cols = np.array([0, 2], dtype=np.int64)
    nodes = [node("ArrayFeatureExtractor", ["X", "cols"], ["picked"]),
             node("Binarizer", ["picked"], ["Y"], threshold=3.0),
             node("Binarizer", ["Xd"], ["Yd"], threshold=1.5)]
    Xd = Xte.astype(np.float64)
    save("features", nodes, [tensor_info("X", F, [None, 4]), tensor_info("Xd", D, [None, 4])],
         [tensor_info("Y", F, [None, 2]), tensor_info("Yd", D, [None, 4])],
         {"in_X": Xte, "in_Xd": Xd,
          "out_Y": Binarizer(threshold=3.0).transform(Xte[:, cols]).astype(np.float32),
          "out_Yd": Binarizer(threshold=1.5).transform(Xd)},
         initializers=[numpy_helper.from_array(cols, "cols")])


def make_dictvectorizer():
    train = [{"a": 1.0, "b": 2.0}, {"c": 3.0}, {"a": 0.5, "d": 1.0}]
    dv = DictVectorizer(sparse=False).fit(train)
    sample = {"b": 2.5, "z": 9.0, "a": 4.0, "d": -1.0}  # "z" is not in the vocabulary
    save("dictvectorizer",
         [node("DictVectorizer", ["X"], ["Y"], string_vocabulary=list(dv.feature_names_))],
         [map_info("X", S, F)], [tensor_info("Y", F, [1, len(dv.feature_names_)])],
         {"mapin_X_keys": np.array(list(sample)), "mapin_X_values": np.array(list(sample.values()), np.float32),
          "out_Y": dv.transform([sample]).astype(np.float32)})


def make_castmap():
    keys = np.array([4, 0, 2], dtype=np.int64)
    vals = np.array([1.5, -2.25, 3.0], dtype=np.float32)
    order = np.argsort(keys)
    sparse = np.zeros((1, 6), np.float32)
    sparse[0, keys] = vals
    nodes = [node("CastMap", ["X"], ["sparse"], cast_to="TO_FLOAT", map_form="SPARSE", max_map=6),
             node("CastMap", ["X"], ["dense_int"], cast_to="TO_INT64"),
             node("CastMap", ["X"], ["dense_str"], cast_to="TO_STRING")]
    save("castmap", nodes, [map_info("X", I64, F)],
         [tensor_info("sparse", F, [1, 6]), tensor_info("dense_int", I64, [1, 3]),
          tensor_info("dense_str", S, [1, 3])],
         {"mapin_X_keys": keys, "mapin_X_values": vals, "out_sparse": sparse,
          "out_dense_int": vals[order].astype(np.int64).reshape(1, -1),
          "out_dense_str": np.array([["%f" % v for v in vals[order]]])})


def make_label_encoders():
    """LabelEncoder at opsets 1, 2 and 4 (duplicate keys, NaN keys, tensor attributes)."""
    x_str = np.array([["a", "b"], ["zz", "c"]])
    x_f = np.array([1.5, np.nan, -0.0, 7.0], dtype=np.float32)
    x_int = np.array([0, 2, 5, -1], dtype=np.int64)
    v1 = [node("LabelEncoder", ["x_int"], ["v1_str"], classes_strings=["a", "b", "c"]),
          node("LabelEncoder", ["x_str"], ["v1_int"], classes_strings=["a", "b", "c", "b"],
               default_int64=-7)]
    save("label_encoder_v1", v1, [tensor_info("x_int", I64, [4]), tensor_info("x_str", S, [2, 2])],
         [tensor_info("v1_str", S, [4]), tensor_info("v1_int", I64, [2, 2])],
         {"in_x_int": x_int, "in_x_str": x_str, "out_v1_str": np.array(["a", "c", "_Unused", "_Unused"]),
          "out_v1_int": np.array([[0, 3], [-7, 2]], np.int64)}, ml_opset=1)
    v2 = [node("LabelEncoder", ["x_str"], ["v2_f"], keys_strings=["a", "c", "a"],
               values_floats=[1.0, 2.0, 3.0]),  # opset 2: the first of repeated keys wins
          node("LabelEncoder", ["x_f"], ["v2_int"], keys_floats=[1.5, float("nan"), 0.0],
               values_int64s=[10, 20, 30], default_int64=99)]
    save("label_encoder_v2", v2, [tensor_info("x_str", S, [2, 2]), tensor_info("x_f", F, [4])],
         [tensor_info("v2_f", F, [2, 2]), tensor_info("v2_int", I64, [4])],
         # bit-wise float keys: the NaN key's bits match this NaN; -0.0 is not 0.0
         {"in_x_str": x_str, "in_x_f": x_f, "out_v2_f": np.array([[1, -0.0], [-0.0, 2]], np.float32),
          "out_v2_int": np.array([10, 20, 99, 99], np.int64)}, ml_opset=2)
    x_d = np.array([2.5, np.nan, 0.0, 3.0])
    v4 = [node("LabelEncoder", ["x_str"], ["v4_i16"], keys_strings=["a", "c", "a"],
               values_tensor=numpy_helper.from_array(np.array([1, 2, 3], np.int16), "v"),
               default_tensor=numpy_helper.from_array(np.array([-5], np.int16), "d")),
          node("LabelEncoder", ["x_d"], ["v4_str"],
               keys_tensor=numpy_helper.from_array(np.array([np.nan, 2.5, -0.0]), "k"),
               values_strings=["nan", "two and a half", "zero"])]
    save("label_encoder_v4", v4, [tensor_info("x_str", S, [2, 2]), tensor_info("x_d", D, [4])],
         [tensor_info("v4_i16", TensorProto.INT16, [2, 2]), tensor_info("v4_str", S, [4])],
         # opset 4: the last repeated key wins; any NaN matches a NaN key; 0.0 == -0.0
         {"in_x_str": x_str, "in_x_d": x_d, "out_v4_i16": np.array([[3, -5], [-5, 2]], np.int16),
          "out_v4_str": np.array(["two and a half", "nan", "zero", "_Unused"])}, ml_opset=4)


# ------------------------------------------------------- ONNX Runtime's operator tests

ORT_X = np.array([1, 0, 0.4, 3, 44, -3, 12, 12.9, -312, 23, 11.3, -222, 23, 11.3, -222, 23, 3311.3,
                  -222, 23, 11.3, -222, 43, 413.3, -114], np.float32).reshape(8, 3)
ORT_TREE = dict(
    nodes_truenodeids=[1, -1, 3, -1, -1, 1, -1, 3, 4, -1, -1, -1, 1, 2, -1, 4, -1, -1, -1],
    nodes_falsenodeids=[2, -1, 4, -1, -1, 2, -1, 6, 5, -1, -1, -1, 6, 3, -1, 5, -1, -1, -1],
    nodes_treeids=[0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2],
    nodes_nodeids=[0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4, 5, 6],
    nodes_featureids=[2, -2, 0, -2, -2, 0, -2, 2, 1, -2, -2, -2, 0, 2, -2, 1, -2, -2, -2],
    nodes_modes=["BRANCH_LEQ", "LEAF", "BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ",
                 "BRANCH_LEQ", "LEAF", "LEAF", "LEAF", "BRANCH_LEQ", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ",
                 "LEAF", "LEAF", "LEAF"],
    class_treeids=[0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2],
    class_nodeids=[1, 3, 4, 1, 4, 5, 6, 2, 4, 5, 6])
ORT_THRESHOLDS = [-172, -2, 2.5, -2, -2, 1.5, -2, -62.5, 213.09999084, -2, -2, -2, 27.5, -172, -2,
                  8.10000038, -2, -2, -2]


def make_ort_tree_classifier():
    w = [1.0, 4, 1, 2, 1, 1, 2, 1, 1, 1, 3]
    ws = [-1.0, 4, -1, 2, -1, 1, -2, 1, -1, 2, -3]
    base = dict(ORT_TREE, nodes_values=floats(ORT_THRESHOLDS))
    nodes = [
        node("TreeEnsembleClassifier", ["X"], ["Y4", "Z4"], class_ids=[2, 0, 1, 0, 2, 3, 1, 2, 0, 1, 3],
             class_weights=w, classlabels_int64s=[0, 1, 2, 3], **base),
        node("TreeEnsembleClassifier", ["X"], ["Ylab", "Zlab"], class_ids=[0] * 11, class_weights=ws,
             classlabels_strings=["label0", "label1"], **base),
        node("TreeEnsembleClassifier", ["X"], ["Y1", "Z1"], class_ids=[0] * 11, class_weights=ws,
             classlabels_int64s=[1], **base),
        node("TreeEnsembleClassifier", ["X"], ["Yp", "Zp"], class_ids=[0] * 9 + [1, 1], class_weights=ws,
             classlabels_int64s=[0, 1], post_transform="LOGISTIC", **base),
        node("TreeEnsembleClassifier", ["Xd"], ["Yd", "Zd"], class_ids=[2, 0, 1, 0, 2, 3, 1, 2, 0, 1, 3],
             classlabels_int64s=[0, 1, 2, 3],
             nodes_values_as_tensor=numpy_helper.from_array(np.array(ORT_THRESHOLDS, np.float64), "v"),
             class_weights_as_tensor=numpy_helper.from_array(np.array(w, np.float64), "w"), **ORT_TREE)]
    z4 = np.array([7, 0, 0, 0, 0, 4, 0, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 2, 1, 0, 0, 3, 0, 0, 1,
                   0, 4], np.float32).reshape(8, 4)
    y4 = np.array([0, 1, 2, 2, 2, 2, 2, 3], np.int64)
    outs = ["Y4", "Z4", "Ylab", "Zlab", "Y1", "Z1", "Yp", "Zp", "Yd", "Zd"]
    types = [I64, F, S, F, I64, F, I64, F, I64, F]
    save("ort_tree_classifier", nodes, [tensor_info("X", F, [8, 3]), tensor_info("Xd", D, [8, 3])],
         [tensor_info(o, t, None) for o, t in zip(outs, types)],
         {"in_X": ORT_X, "in_Xd": ORT_X.astype(np.float64), "out_Y4": y4, "out_Z4": z4,
          "out_Ylab": np.array(["label1", "label0", "label0", "label0", "label0", "label1", "label0", "label0"]),
          "out_Zlab": np.array([-5, 5, 1, -1, 1, -1, 1, -1, 1, -1, -1, 1, 1, -1, 3, -3], np.float32).reshape(8, 2),
          "out_Y1": np.array([1, 0, 0, 0, 0, 1, 0, 0], np.int64),
          "out_Z1": np.array([5, -1, -1, -1, -1, 1, -1, -3], np.float32).reshape(8, 1),
          "out_Yp": np.array([1, 1, 0, 0, 0, 1, 0, 0], np.int64),
          "out_Zp": np.array([0.00669282, 0.99330717, 0.04742586, 0.88079702, 0.73105859, 0.26894142,
                              0.73105859, 0.26894142, 0.73105859, 0.26894142, 0.26894140, 0.73105859,
                              0.73105859, 0.26894142, 0.5, 0.04742586], np.float32).reshape(8, 2),
          "out_Yd": y4, "out_Zd": z4})


def make_ort_tree_regressor():
    multi = dict(
        nodes_truenodeids=[1, 2, -1, -1, -1, 1, -1, 3, -1, -1, 1, -1, -1],
        nodes_falsenodeids=[4, 3, -1, -1, -1, 2, -1, 4, -1, -1, 2, -1, -1],
        nodes_treeids=[0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2],
        nodes_nodeids=[0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2],
        nodes_featureids=[2, 1, -2, -2, -2, 0, -2, 2, -2, -2, 1, -2, -2],
        nodes_values=floats([10.5, 13.10000038, -2, -2, -2, 1.5, -2, -213, -2, -2, 13.10000038, -2, -2]),
        nodes_modes=["BRANCH_LEQ", "BRANCH_LEQ", "LEAF", "LEAF", "LEAF", "BRANCH_LEQ", "LEAF", "BRANCH_LEQ",
                     "LEAF", "LEAF", "BRANCH_LEQ", "LEAF", "LEAF"],
        target_treeids=[0] * 10 + [1] * 10 + [2] * 6,
        target_nodeids=[0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 0, 0, 1, 1, 2, 2],
        target_ids=[0, 1] * 13,
        target_weights=floats([1.5, 27.5, 2.25, 20.75, 2, 23, 3, 14, 0, 41, 1.83333333, 24.5, 0, 41, 2.75,
                               16.25, 2, 23, 3, 14, 2.66666667, 17, 2, 23, 3, 14]),
        n_targets=2)
    single = dict(
        nodes_truenodeids=[1, 0, 0, 1, 0, 0, 1, 0, 0], nodes_falsenodeids=[2, 0, 0, 2, 0, 0, 2, 0, 0],
        nodes_treeids=[0, 0, 0, 1, 1, 1, 2, 2, 2], nodes_nodeids=[0, 1, 2, 0, 1, 2, 0, 1, 2],
        nodes_featureids=[0, 0, 0, 0, 0, 0, 1, 0, 0], nodes_values=floats([1, 0, 0, 0.5, 0, 0, 0.5, 0, 0]),
        nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"] * 3, target_treeids=[0, 0, 1, 1, 2, 2],
        target_nodeids=[1, 2, 1, 2, 1, 2], target_ids=[0] * 6,
        target_weights=floats([33.33333, 16.66666, 33.33333, -3.33333, 16.66666, -3.333333]), n_targets=1)
    nodes = [node("TreeEnsembleRegressor", ["X"], ["avg"], aggregate_function="AVERAGE",
                  base_values=[0.0, 0.0], **multi),
             node("TreeEnsembleRegressor", ["X"], ["min"], aggregate_function="MIN", base_values=[5.0, 5.0], **multi),
             node("TreeEnsembleRegressor", ["X"], ["max"], aggregate_function="MAX", base_values=[0.0, 0.0], **multi),
             node("TreeEnsembleRegressor", ["X"], ["sum"], base_values=[0.0, 0.0], **multi)]
    for agg in ("SUM", "AVERAGE", "MIN", "MAX"):
        nodes.append(node("TreeEnsembleRegressor", ["X1"], ["s_" + agg.lower()], aggregate_function=agg, **single))
    x1 = np.array([0, 1, 1, 1, 2, 0], np.float32).reshape(3, 2)
    r = lambda v, c: np.array(v, np.float32).reshape(-1, c)
    outs = ["avg", "min", "max", "sum", "s_sum", "s_average", "s_min", "s_max"]
    save("ort_tree_regressor", nodes, [tensor_info("X", F, [8, 3]), tensor_info("X1", F, [3, 2])],
         [tensor_info(o, F, None) for o in outs],
         {"in_X": ORT_X, "in_X1": x1,
          "out_avg": r([1.33333333, 29, 3, 14, 2, 23, 2, 23, 2, 23, 2.66666667, 17, 2, 23, 3, 14], 2),
          "out_min": r([5, 28, 8, 19, 7, 28, 7, 28, 7, 28, 7, 19, 7, 28, 8, 19], 2),
          "out_max": r([2, 41, 3, 14, 2, 23, 2, 23, 2, 23, 3, 23, 2, 23, 3, 14], 2),
          "out_sum": r([4, 87, 9, 42, 6, 69, 6, 69, 6, 69, 8, 51, 6, 69, 9, 42], 2),
          "out_s_sum": r([63.33333333, 26.66666667, 30.0], 1),
          "out_s_average": r([63.33333333 / 3, 26.66666667 / 3, 30.0 / 3], 1),
          "out_s_min": r([-3.33333, -3.33333, -3.33333], 1), "out_s_max": r([33.33333, 33.33333, 16.66666], 1)})


def make_ort_svm():
    coef = floats([1.14360327, 1.95968249, -1.175683, -1.92760275, -1.32575698, -1.32575698, 0.66332785,
                   0.66242913, 0.53120854, 0.53510444, -1.06631298, -1.06631298, 0.66332785, 0.66242913,
                   0.53120854, 0.53510444, 1, -1])
    sv = floats([0, 0.5, 32, 2, 2.9, -32, 1, 1.5, 1, 3, 13.3, -11, 12, 12.9, -312, 43, 413.3, -114])
    rho6 = floats([0.5279583, 0.32605162, 0.32605162, 0.06663721, 0.06663721, 0])
    kp = floats([0.001, 0, 3])
    svc4 = dict(kernel_type="RBF", coefficients=coef, support_vectors=sv, vectors_per_class=[2, 2, 1, 1],
                rho=rho6, kernel_params=kp, classlabels_ints=[0, 1, 2, 3])
    svc2 = dict(kernel_type="RBF", coefficients=coef, support_vectors=sv, vectors_per_class=[3, 3],
                rho=floats([0.5279583]), kernel_params=kp, classlabels_ints=[0, 1])
    lin_coef = floats([-1.55181212e-01, 2.42698956e-01, 7.01893432e-03, 4.07614474e-01, -3.24927823e-02,
                       2.79897536e-04, -1.95771302e-01, -3.52437368e-01, -2.15973096e-02, -4.38190277e-01,
                       4.56869105e-02, -1.29375499e-02])
    nodes = [
        node("SVMClassifier", ["X"], ["Y_svc4", "Z_svc4"], **svc4),
        node("SVMClassifier", ["X"], ["Y_liblinear", "Z_liblinear"], kernel_type="LINEAR", coefficients=lin_coef,
             rho=floats([-0.07489691, -0.1764396, -0.21167431, -0.51619097]), kernel_params=kp,
             classlabels_ints=[0, 1, 2, 3]),
        node("SVMClassifier", ["X5"], ["Y_prob", "Z_prob"],
             prob_a=floats([-3.8214362, 1.82177748, 1.82177748, 7.17655643, 7.17655643, 0.69314718]),
             prob_b=floats([-1.72839673, -1.12863030, -1.12863030, -6.48340925, -6.48340925, 2.39189538e-16]),
             **svc4),
        node("SVMClassifier", ["X5"], ["Y_svc2", "Z_svc2"], **svc2),
        node("SVMClassifier", ["X5d"], ["Y_svc2d", "Z_svc2d"], **svc2),
        node("SVMClassifier", ["Xl"], ["Y_linear", "Z_linear"], kernel_type="LINEAR",
             coefficients=floats([0.766398549079895, 0.0871576070785522, 0.110420741140842, -0.963976919651031]),
             support_vectors=floats([4.80000019073486, 3.40000009536743, 1.89999997615814, 5, 3, 1.60000002384186,
                                     4.5, 2.29999995231628, 1.29999995231628, 5.09999990463257, 2.5, 3]),
             vectors_per_class=[3, 1], rho=floats([2.23510527610779]), kernel_params=floats([0.122462183237076, 0, 3]),
             classlabels_ints=[0, 1])]
    x5 = ORT_X[:5]
    xl = np.array([5.1, 3.5, 1.4, 4.9, 3, 1.4, 4.7, 3.2, 1.3, 4.6, 3.1, 1.5, 5, 3.6, 1.4], np.float32).reshape(5, 3)
    z2 = np.array([0.95695829391479492, -0.95695829391479492, 0.1597825288772583, -0.1597825288772583,
                   0.797798752784729, -0.797798752784729, -0.52760261297225952, 0.52760261297225952,
                   -0.52760261297225952, 0.52760261297225952], np.float32).reshape(5, 2)
    outs = ["Y_svc4", "Z_svc4", "Y_liblinear", "Z_liblinear", "Y_prob", "Z_prob", "Y_svc2", "Z_svc2",
            "Y_svc2d", "Z_svc2d", "Y_linear", "Z_linear"]
    save("ort_svm", nodes, [tensor_info("X", F, [8, 3]), tensor_info("X5", F, [5, 3]),
                            tensor_info("X5d", D, [5, 3]), tensor_info("Xl", F, [5, 3])],
         [tensor_info(o, I64 if o[0] == "Y" else F, None) for o in outs],
         {"in_X": ORT_X, "in_X5": x5, "in_X5d": x5.astype(np.float64), "in_Xl": xl,
          "out_Y_svc4": np.array([1, 1, 2, 0, 0, 0, 0, 3], np.int64),
          "out_Z_svc4": np.array([
              -0.956958294, 0.799815655, 0.799815655, 0.988598406, 0.988598406, 0,
              -0.159782529, 0.407864451, 0.407864451, 0.347750872, 0.347750872, 0,
              0.527958274, -0.999705434, 0.326051623, -0.999675810, 0.0666372105, 1.00000000,
              0.527958274, 0.325695992, 0.326051623, 0.0663511604, 0.0666372105, 0.000268258271,
              0.527958274, 0.325695992, 0.326051623, 0.0663511604, 0.0666372105, 0.000268258271,
              0.527958274, 0.326051623, 0.326051623, 0.0666372105, 0.0666372105, 0,
              0.527958274, 0.325695992, 0.326051623, 0.0663511604, 0.0666372105, 0.000268258271,
              0.527958274, 0.326051623, -0.999705434, 0.0666372105, -0.999675810, -1.00000000], np.float32).reshape(8, 6),
          "out_Y_liblinear": np.array([1, 0, 1, 1, 1, 0, 1, 0], np.int64),
          "out_Z_liblinear": np.array([
              -0.227270544, 0.332829535, -0.279307127, -0.518262208, 10.1172562, -0.282575697, -16.1046638, 0.659568906,
              -0.996162534, 4.30999184, -0.232234091, -0.707304120, -2.45976996, 8.87092972, -3.76557732, -6.76487541,
              -2.45976996, 8.87092972, -3.76557732, -6.76487541, 798.446777, -98.3552551, -1166.80896, 144.001923,
              -2.45976996, 8.87092972, -3.76557732, -6.76487541, 92.7596283, 3.99134970, -151.693329, 1.44020212],
              np.float32).reshape(8, 4),
          "out_Y_prob": np.array([1, 1, 2, 0, 0], np.int64),
          "out_Z_prob": np.array([
              0.13766955, 0.21030431, 0.32596754, 0.3260586, 0.45939931, 0.26975416, 0.13539588, 0.13545066,
              0.71045899, 0.07858939, 0.05400437, 0.15694726, 0.58274772, 0.10203105, 0.15755227, 0.15766896,
              0.58274772, 0.10203105, 0.15755227, 0.15766896], np.float32).reshape(5, 4),
          "out_Y_svc2": np.array([1, 1, 1, 0, 0], np.int64), "out_Z_svc2": z2,
          "out_Y_svc2d": np.array([1, 1, 1, 0, 0], np.int64), "out_Z_svc2d": z2,
          "out_Y_linear": np.zeros(5, np.int64),
          "out_Z_linear": np.array([-1.5556798, 1.5556798, -1.2610321, 1.2610321, -1.5795376, 1.5795376,
                                    -1.3083477, 1.3083477, -1.6572928, 1.6572928], np.float32).reshape(5, 2)})


def make_ort_linear():
    coef = floats([-0.22562418, 0.34188559, 0.68346153, -0.68051993, -0.1975279, 0.03748541])
    icpt = floats([-3.91601811, 0.42575697, 0.13731251])
    x = np.array([1, 0, 3, 44, 23, 11.3], np.float32).reshape(3, 2)
    nodes = [node("LinearClassifier", ["X"], ["Y", "Z"], coefficients=coef, intercepts=icpt,
                  classlabels_ints=[1, 2, 3], multi_class=0),
             node("LinearClassifier", ["X"], ["Ys", "Zs"], coefficients=coef, intercepts=icpt,
                  classlabels_ints=[1, 2, 3], post_transform="LOGISTIC"),
             node("LinearClassifier", ["X"], ["Yb", "Zb"], coefficients=floats([0.00085401, -0.00314063]),
                  intercepts=floats([0.03930598])),
             node("LinearClassifier", ["X"], ["Ybl", "Zbl"], coefficients=floats([0.00085401, -0.00314063]),
                  intercepts=floats([0.03930598]), classlabels_strings=["not_so_good", "pretty_good"]),
             node("LinearClassifier", ["Xi"], ["Yi", "Zi"], coefficients=coef, intercepts=icpt,
                  classlabels_ints=[1, 2, 3])]
    outs = [("Y", I64), ("Z", F), ("Ys", I64), ("Zs", F), ("Yb", I64), ("Zb", F), ("Ybl", S), ("Zbl", F),
            ("Yi", I64), ("Zi", F)]
    save("ort_linear", nodes, [tensor_info("X", F, [3, 2]), tensor_info("Xi", I64, [3, 2])],
         [tensor_info(o, t, None) for o, t in outs],
         {"in_X": x, "in_Xi": np.array([1, 0, 3, 44, 23, 11], np.int64).reshape(3, 2),
          "out_Y": np.array([2, 1, 2], np.int64),
          "out_Z": np.array([-4.14164229, 1.1092185, -0.06021539, 10.45007543, -27.46673545, 1.19408663,
                             -5.24206713, 8.45549693, -3.98224414], np.float32).reshape(3, 3),
          "out_Ys": np.array([2, 1, 2], np.int64),
          "out_Zs": np.array([0.015647972, 0.751983387, 0.484950699, 0.999971055, 1.17855e-12, 0.767471158,
                              0.005261482, 0.999787317, 0.018302525], np.float32).reshape(3, 3),
          "out_Yb": np.array([1, 0, 1], np.int64),
          "out_Zb": np.array([0.0401599929, -0.0963197052, 0.0234590918], np.float32).reshape(3, 1),
          "out_Ybl": np.array(["pretty_good", "not_so_good", "pretty_good"]),
          "out_Zbl": np.array([0.959840000, 0.0401599929, 1.09631968, -0.0963197052, 0.976540923, 0.0234590918],
                              np.float32).reshape(3, 2),
          "out_Yi": np.array([2, 1, 2], np.int64),
          "out_Zi": np.array([-4.14164229, 1.1092185, -0.06021539, 10.45007543, -27.46673545, 1.19408663,
                              -5.3446321487426758, 8.6596536636352539, -3.9934897422790527], np.float32).reshape(3, 3)})


# ------------------------------------------------------------------------ malformed models

def make_bad_models():
    tree = dict(nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 1, 0],
                nodes_values=[0.5, 0.5, 0.0], nodes_modes=["BRANCH_LEQ", "BRANCH_LEQ", "LEAF"],
                nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 2, 0],
                target_treeids=[0], target_nodeids=[2], target_ids=[0], target_weights=[1.0], n_targets=1)
    cases = {
        "tree_cycle": (node("TreeEnsembleRegressor", ["X"], ["Y"], **tree), "cycle"),
        "tree_missing_child": (node("TreeEnsembleRegressor", ["X"], ["Y"], **dict(tree, nodes_falsenodeids=[7, 2, 0])),
                               "does not exist"),
        "tree_feature": (node("TreeEnsembleRegressor", ["X"], ["Y"],
                              **dict(tree, nodes_featureids=[5, 1, 0], nodes_truenodeids=[2, 0, 0])), "feature 5"),
        "tree_target": (node("TreeEnsembleRegressor", ["X"], ["Y"], **dict(tree, target_ids=[3])), "target"),
        "tree_lengths": (node("TreeEnsembleRegressor", ["X"], ["Y"], **dict(tree, nodes_nodeids=[0, 1])),
                         "different lengths"),
        "linear_features": (node("LinearClassifier", ["X"], ["Y", "Z"], coefficients=[1.0, 2.0, 3.0, 4.0],
                                 intercepts=[0.0, 1.0], classlabels_ints=[0, 1]), "features"),
        "svm_coefficients": (node("SVMClassifier", ["X"], ["Y", "Z"], kernel_type="RBF", coefficients=[1.0],
                                  support_vectors=[0.0] * 6, vectors_per_class=[1, 1], rho=[0.0],
                                  classlabels_ints=[0, 1]), "coefficients"),
        "label_encoder_lengths": (node("LabelEncoder", ["X"], ["Y"], keys_floats=[1.0, 2.0], values_int64s=[1]),
                                  "keys"),
        "v5_mode": (node("TreeEnsemble", ["X"], ["Y"], n_targets=1, tree_roots=[0], nodes_featureids=[0],
                         nodes_truenodeids=[0], nodes_trueleafs=[1], nodes_falsenodeids=[0], nodes_falseleafs=[1],
                         nodes_modes=numpy_helper.from_array(np.array([9], np.uint8), "m"),
                         nodes_splits=numpy_helper.from_array(np.array([0.0], np.float32), "s"),
                         leaf_targetids=[0], leaf_weights=numpy_helper.from_array(np.array([1.0], np.float32), "w")),
                    "nodes_modes"),
    }
    for name, (n, err) in cases.items():
        opset = 5 if name.startswith("v5") else 3
        outputs = [tensor_info(o, F if o == "Y" and n.op_type not in ("LinearClassifier", "LabelEncoder") else I64, None)
                   for o in n.output]
        save("bad_" + name, [n], [tensor_info("X", F, [2, 3])], outputs, None, ml_opset=opset)
        print(f"    {{\"{name}\", \"{err}\"}},")  # the table of tests/unit/test_ml.c


if __name__ == "__main__":
    for make in (make_logreg, make_logreg_binary, make_linreg, make_svc, make_svr, make_random_forest,
                 make_gradient_boosting, make_gb_classifier, make_pipeline, make_features,
                 make_dictvectorizer, make_castmap, make_label_encoders, make_ort_tree_classifier,
                 make_ort_tree_regressor, make_ort_svm, make_ort_linear, make_bad_models):
        make()
    print("wrote", len([f for f in os.listdir(OUT) if f.startswith("ml_")]), "files to", OUT)
