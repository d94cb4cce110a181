{%- for o in r.options %} \
    {{ o.flag }}{% if let Some(v) = o.value %} {{ v }}{% endif %}
{%- endfor %}