"""deploy/ cannot run here; check it by construction: the YAML parses
(python3-yaml, no schema), the objects agree with each other, and every flag
they pass to onyx serve is one it accepts."""
import os
import re
import subprocess

import yaml

from conftest import ONYX, ROOT

DEPLOY = os.path.join(ROOT, "deploy")


def load(name):
    with open(os.path.join(DEPLOY, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def serve_flags():
    out = subprocess.run([ONYX, "serve", "--help"], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"(--[a-z-]+)", out))


def check_args(args, flags):
    for a in args:
        if a.startswith("--"):
            assert a.split("=")[0] in flags, f"onyx serve has no flag {a}"


def test_kubernetes_deployment_and_service():
    docs = {d["kind"]: d for d in load("kubernetes.yaml")}
    dep, svc = docs["Deployment"], docs["Service"]
    assert dep["apiVersion"] == "apps/v1" and svc["apiVersion"] == "v1"
    pod = dep["spec"]["template"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert svc["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    (c,) = pod["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"http": 8000, "grpc": 8001, "metrics": 8002}
    for p in svc["spec"]["ports"]:
        assert p["targetPort"] in ports
    assert c["readinessProbe"]["httpGet"] == {"path": "/v2/health/ready", "port": "http"}
    assert c["livenessProbe"]["httpGet"] == {"path": "/v2/health/live", "port": "http"}
    assert c["startupProbe"]["httpGet"]["path"] == "/v2/health/ready"
    check_args(c["args"], serve_flags())
    assert "--host=0.0.0.0" in c["args"] and "--threads=$(ONYX_THREADS)" in c["args"]
    env = {e["name"]: e for e in c["env"]}
    ref = env["ONYX_THREADS"]["valueFrom"]["resourceFieldRef"]
    assert ref["resource"] == "limits.cpu" and ref["containerName"] == c["name"]
    assert c["resources"]["limits"]["cpu"] == c["resources"]["requests"]["cpu"]
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    shutdown = [a for a in c["args"] if a.startswith("--shutdown-timeout-ms=")][0]
    assert pod["spec"]["terminationGracePeriodSeconds"] * 1000 > int(shutdown.split("=")[1])
    mounts = {m["name"] for m in c["volumeMounts"]}
    assert mounts <= {v["name"] for v in pod["spec"]["volumes"]}


def test_kserve_inference_service():
    (isvc,) = load("kserve.yaml")
    assert isvc["apiVersion"] == "serving.kserve.io/v1beta1" and isvc["kind"] == "InferenceService"
    pred = isvc["spec"]["predictor"]
    (c,) = pred["containers"]
    assert c["name"] == "kserve-container"
    dep = {d["kind"]: d for d in load("kubernetes.yaml")}["Deployment"]
    assert c["image"] == dep["spec"]["template"]["spec"]["containers"][0]["image"]
    check_args(c["args"], serve_flags())
    assert "--model-repository=/mnt/models" in c["args"]
    port = c["ports"][0]["containerPort"]
    assert f"--http-port={port}" in c["args"]
    assert c["readinessProbe"]["httpGet"] == {"path": "/v2/health/ready", "port": port}
    assert {e["name"] for e in c["env"]} >= {"STORAGE_URI", "ONYX_THREADS"}
    assert pred["minReplicas"] <= pred["maxReplicas"]


def test_dockerfile():
    text = open(os.path.join(DEPLOY, "Dockerfile")).read()
    froms = re.findall(r"^FROM (\S+)", text, re.M)
    assert froms and all(f.startswith("debian:12") for f in froms)
    user = re.findall(r"^USER (\S+)", text, re.M)
    assert user and not user[-1].startswith(("0", "root"))
    assert re.search(r"^HEALTHCHECK .*\n?.*/v2/health/ready", text, re.M)
    assert set(re.findall(r"^EXPOSE (.*)$", text, re.M)[0].split()) == {"8000", "8001", "8002"}
    cmd = re.findall(r'^CMD \[(.*)\]', text, re.M)[0]
    check_args([a.strip().strip('"') for a in cmd.split(",")], serve_flags())
    # the build stage installs what scripts/deps.sh lists for serve
    for pkg in ("libmicrohttpd-dev", "libnghttp2-dev"):
        assert pkg in text
