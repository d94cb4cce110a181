//! Stand-ins for rehearsals.
