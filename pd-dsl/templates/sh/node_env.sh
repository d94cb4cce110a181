# This node's env where the layout gives it its own (`nodes:`), else the role's.
case "$PD_NODE" in
{%- for n in r.nodes %}
{{ n.node }})
{%- let r = n %}{% include "sh/env.sh" %}
    ;;
{%- endfor %}
*){% include "sh/env.sh" %}
    ;;
esac