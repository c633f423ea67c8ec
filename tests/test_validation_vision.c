/* test_validation_vision.c: timm's published inference throughput of 18
 * vision transformers (traces/validation/timm-vit.csv: ViT tiny to huge,
 * patches of 8 to 32, 224 and 384 pixels; fp16 autocast, eager, batch
 * 1024) on an RTX 3090 and 4090 (PyTorch 2.4) and a 4090 and 5090
 * (PyTorch 2.9), as strata gen llm builds them (framework pytorch:
 * docs/vision.md).  Held out whole: nothing was fitted on these rows.
 * strata comes out 3-27% slow on the GeForce cards (docs/vision.md says
 * where the time goes); the bounds are where the model stands, so a change
 * that moves these rows shows here. */
#include "test.h"
#include "valgroups.h"

int main(void)
{
    static const struct tu_bound b[] = {
        {"TIMM3090/prefill", 0.18, 0.25},
        {"TIMM4090/prefill", 0.18, 0.25},
        {"TIMM4090P29/prefill", 0.22, 0.28},
        {"TIMM5090P29/prefill", 0.10, 0.19},
    };
    tu_check_groups("traces/validation/timm-vit.csv", 72, b, 4);
    TEST_MAIN_END();
}
