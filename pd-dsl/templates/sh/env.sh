{%- for e in r.env %}
export {{ e.name|ident }}={{ e.value }}{% if e.prepend %}{{ e.name|inherit }}{% endif %}
{%- endfor %}