{% include "sh/header.sh" %}
# Starts the {{ m.product|comment }} container for one node of this layout.
# Overrides: PD_IMAGE, PD_CONTAINER_NAME, PD_MODEL_HOST_DIR (host weights dir), PD_SHM_SIZE,
# PD_LOG_HOST_DIR, PD_CONTAINER_EXISTING (reuse | replace, for a container of the same name).
# This directory is mounted at /pd-dsl inside the container.
set -euo pipefail

IMAGE=${PD_IMAGE:-{{ m.docker.image }}}
NAME=${PD_CONTAINER_NAME:-{{ m.docker.container }}}
MODEL_DIR={{ m.model_path }}
MODEL_HOST_DIR=${PD_MODEL_HOST_DIR:-$MODEL_DIR}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

DEVICES=(
{% for d in m.docker.npu_devices %}    --device {{ d }}
{% endfor %}{% for d in m.docker.extra_devices %}    --device {{ d }}
{% endfor %})
MOUNTS=(
{% for v in m.docker.mounts %}    -v {{ v }}
{% endfor %})
{% raw %}
die() { echo "docker.sh: error: $*" >&2; exit 1; }
if existing=$(docker container inspect -f '{{.Config.Image}} {{.State.Running}}' "$NAME" 2>/dev/null); then
    have_image=${existing% *}
    running=${existing##* }
    case ${PD_CONTAINER_EXISTING:-reuse} in
        reuse)
            [[ $have_image == "$IMAGE" ]] || die "container $NAME exists with image $have_image, not $IMAGE; remove it or set PD_CONTAINER_EXISTING=replace"
            if [[ $running != true ]]; then
                echo "docker.sh: container $NAME exists (stopped); starting it again"
                docker start "$NAME" >/dev/null
            else
                echo "docker.sh: container $NAME is already running; reusing it"
            fi
            echo "next: docker exec -it $NAME bash, then PD_NODE_INDEX=<i> PD_NODE_IPS=<ips> ./run.sh"
            exit 0
            ;;
        replace)
            echo "docker.sh: replacing existing container $NAME (image $have_image, running: $running)"
            docker rm -f "$NAME" >/dev/null
            ;;
        *) die "PD_CONTAINER_EXISTING must be reuse or replace, got '$PD_CONTAINER_EXISTING'" ;;
    esac
fi

{% endraw %}docker run -itd \
    --name "$NAME" \
    --net=host \
    --shm-size="${PD_SHM_SIZE:-{{ m.docker.shm_size }}}" \
{% if m.docker.privileged %}    --privileged=true \
{% endif %}    "${DEVICES[@]}" \
    "${MOUNTS[@]}" \
    -v "$MODEL_HOST_DIR:$MODEL_DIR" \
    -v "${PD_LOG_HOST_DIR:-/var/log/pd-dsl}:/var/log/pd-dsl" \
    -v "$HERE:/pd-dsl" \
    -w /pd-dsl \
    "$IMAGE" bash

echo "started $NAME; next: docker exec -it $NAME bash, then PD_NODE_INDEX=<i> PD_NODE_IPS=<ips> ./run.sh"
