/* What a component that hosts an engine registers (rttcc/mca.h). */
#include "opal_config.h"

#include "glue.h"

int rttcc_mca_register(const mca_base_component_t *component)
{
    int rc = rttcc_mca_register_params(component);
    if (OPAL_SUCCESS == rc) {
        rc = rttcc_mca_register_pvars(component);
    }
    return rc;
}
