#!/usr/bin/env bash
# Installs what `swift test` needs beyond Swift: Debian packages for SQLite (GRDB), libxml2, xmlsec1
# and zlib (SAML; the xmlsec1 program is what the test IdP signs with), openssl and curl (the TLS
# test), PostgreSQL (the shared store's tests run on a throw-away cluster that scripts/test.sh
# starts), nginx (the proxy in front of the multi-instance tests' instances), podman (scripts/image.sh builds the container image the image test boots), python3-venv
# (every Python package the tests use lives in a virtual environment), and those Python packages.
# Safe to run again; installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

packages=()
for package in libsqlite3-dev libssl-dev libxml2-dev libxmlsec1-dev zlib1g-dev xmlsec1 openssl curl postgresql podman python3-venv; do
    dpkg -s "$package" >/dev/null 2>&1 || packages+=("$package")
done
# nginx, the proxy the multi-instance tests put in front of their instances (any package of it).
[ -x /usr/sbin/nginx ] || [ -x /usr/bin/nginx ] || packages+=(nginx-light)
if [ "${#packages[@]}" -gt 0 ]; then
    echo "installing ${packages[*]}"
    $sudo apt-get update -qq
    # RUNLEVEL=1 keeps invoke-rc.d from starting the system's own PostgreSQL service: the tests run
    # their own throw-away cluster as an ordinary user (scripts/postgres-test-cluster.sh).
    DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 $sudo apt-get install -y -qq "${packages[@]}"
fi

# --- The Python packages the tests drive: firebase-admin (the compatibility tests), Google's Tink
# (the keyset the Firebase Android SDK sends as `publicKey`), Selenium and axe-core (the browser
# tests), pinned in Tests/*/requirements.txt, in one virtual environment that scripts/test.sh puts
# first on PATH.
bash scripts/test-python.sh install

# --- Browser tests (Tests/Browser, run by BrowserTests.swift): headless Chromium and its driver from
# Debian (Selenium and axe-core are in the tests' virtual environment above).
browser_packages=()
for package in chromium chromium-driver; do
    dpkg -s "$package" >/dev/null 2>&1 || browser_packages+=("$package")
done
if [ "${#browser_packages[@]}" -gt 0 ]; then
    echo "installing ${browser_packages[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${browser_packages[@]}"
fi

# --- Federated sign-in tests: oidc-provider-mock (PyPI) in a virtual environment of its own, which
# scripts/test.sh starts on a free loopback port.
bash scripts/oidc-provider-mock.sh install

# --- SAML sign-in tests: pysaml2's IdP (PyPI, pinned in Tests/SAMLIdP/requirements.txt) in a virtual
# environment of its own, which scripts/test.sh starts on a free loopback port.
bash scripts/saml-idp.sh install

# --- A second OpenID Connect provider for the federated sign-in tests: django-oidc-provider (PyPI) in
# a virtual environment of its own, which scripts/test.sh starts on a free loopback port.
bash scripts/django-oidc-provider.sh install

# --- Mail tests (ActionLinksSMTPTests, SMTPMailTests, MailCrashTests): aiosmtpd (PyPI, pinned in
# Tests/SMTPServer/requirements.txt) in a virtual environment of its own; each test starts its own
# server on a free loopback port.
bash scripts/smtp-server.sh install
