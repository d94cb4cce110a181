
# Some nodes run their own settings (the layout's `nodes:`): run.sh says which node this is.
if ! [[ ${PD_NODE:-} =~ ^[0-9]+$ ]]; then
    echo "$0: PD_NODE must be this node's index, exported by run.sh; got '${PD_NODE:-}'" >&2
    exit 2
fi