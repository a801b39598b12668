#!/usr/bin/env bash
# Builds and runs the Dockerfile with Debian's podman on a machine that cannot pull from Docker Hub
# (README, "Running in Docker"): a stand-in for node:26-bookworm-slim is made from debootstrap and the
# npm registry's Node binary, containers run with runc (crun refuses hybrid cgroups) and without
# podman's default ulimits (raising them needs CAP_SYS_RESOURCE). Run as root; needs podman, runc,
# debootstrap (apt-get install -y podman runc debootstrap) and PostgreSQL on 127.0.0.1:5432.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/linkauth-image-XXXXXX)
trap 'rm -rf "$work"' EXIT
export CONTAINERS_CONF="$work/containers.conf"
printf '[containers]\ndefault_ulimits = []\n' >"$CONTAINERS_CONF"
podman=(podman --runtime runc)

root="$work/rootfs"
debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian
cp /etc/resolv.conf "$root/etc/resolv.conf"
DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -q libatomic1
chroot "$root" apt-get clean
node_bin=$(npx -y node@26 -p process.execPath)
cp "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$root/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
chroot "$root" groupadd -g 1000 node
chroot "$root" useradd -u 1000 -g node -s /bin/bash -m node
# The machine's CA bundle: its TLS-intercepting proxy signs the npm registry's certificate.
mkdir -p "$root/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
tar -C "$root" -cf "$work/rootfs.tar" .
"${podman[@]}" import --change 'CMD ["node"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  "$work/rootfs.tar" docker.io/library/node:26-bookworm-slim

"${podman[@]}" build --format docker --network host --pull=never -t localhost/linkauth:local .

psql -h 127.0.0.1 -U postgres -qc 'drop database if exists linkauth_image' -c 'create database linkauth_image' postgres
"${podman[@]}" run -d --name linkauth-image --network host -e PORT=39601 -e ADMIN_PORT=39602 \
  -e ISSUER=http://127.0.0.1:39601 -e DATABASE_URL=postgres://postgres@127.0.0.1:5432/linkauth_image \
  -e ADMIN_TOKEN="$(openssl rand -hex 32)" -e COOKIE_SECRET="$(openssl rand -hex 32)" \
  -e KEY_ENCRYPTION_KEY="$(openssl rand -hex 32)" localhost/linkauth:local
for _ in $(seq 1 60); do curl -sf http://127.0.0.1:39601/readyz && break; sleep 1; done
echo
ss -ltn | grep -E ':3960[12] '
"${podman[@]}" exec -e LINKAUTH_ADMIN_URL=http://127.0.0.1:39602 linkauth-image linkauth clients list
"${podman[@]}" stop -t 10 linkauth-image
echo "exit code: $("${podman[@]}" inspect linkauth-image --format '{{.State.ExitCode}}')"
"${podman[@]}" rm linkauth-image
psql -h 127.0.0.1 -U postgres -qc 'drop database linkauth_image' postgres
