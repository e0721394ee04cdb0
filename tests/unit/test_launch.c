/* tests/unit/test_launch.c: the launch readers and writers (model/launch.h) against values
 * known without them: the bash a Megatron-LM script is written in (arrays split as bash
 * splits them, ${VAR:-default}, $((...)), if branches), Megatron-LM's own rules (its padded
 * vocabulary: 50257 -> 51200 at tp 8, GPT-3 175B's embedding in Megatron; its SwiGLU FFN
 * default int(8h/3 / 64) x 64 = 10880 at h = 4096), torchtitan's (the -1 degree takes the GPUs
 * left; 2 stages a rank for a looped schedule), the refusals (experts: issue 38; context
 * parallelism: issue 39; too few GPUs for the degrees), errors at line:column, and writers
 * whose text reads back to the same config. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/launch.h"
#include "tests/check.h"
#include "util/err.h"

static int rd(const char *text, int devices, struct config *c, struct launch_info *info,
              struct mt_err *e)
{
    struct launch_read_opts o = {devices};
    err_clear(e);
    return launch_read(text, strlen(text), "t.sh", &o, c, info, e);
}

static const char llama_script[] =
    "#!/bin/bash\n"
    "#SBATCH --nodes=2\n"
    "GPUS_PER_NODE=8\n"
    "NUM_NODES=${SLURM_NNODES:-1}\n"
    "TP=${TP:-2}\n"
    "LAYERS=$(( 16 * 2 ))\n"
    "DTYPE=bf16\n"
    "MODEL_ARGS=(\n"
    "    --num-layers $LAYERS   # a comment inside the array\n"
    "    --hidden-size 4096 --num-attention-heads 32\n"
    "    --group-query-attention --num-query-groups 8\n"
    "    --ffn-hidden-size 14336 --seq-length 8192 --max-position-embeddings 8192\n"
    "    --swiglu --normalization RMSNorm --disable-bias-linear\n"
    "    --untie-embeddings-and-output-weights\n"
    ")\n"
    "EXTRA=()\n"
    "if [[ \"$DTYPE\" == \"fp8\" ]]; then\n"
    "    EXTRA+=(\"--fp8-format hybrid\")\n"
    "elif [ \"$DTYPE\" = bf16 ]; then\n"
    "    EXTRA+=(\"--bf16 --vocab-size 128256\")\n"
    "else\n"
    "    EXTRA+=(--fp16)\n"
    "fi\n"
    "cat <<EOF > notes.txt\n"
    "--num-layers 99 in a here document is not the launch\n"
    "EOF\n"
    "torchrun --nproc_per_node $GPUS_PER_NODE --nnodes=$NUM_NODES pretrain_gpt.py \\\n"
    "    \"${MODEL_ARGS[@]}\" ${EXTRA[@]} \\\n"
    "    --tensor-model-parallel-size $TP --pipeline-model-parallel-size 4 \\\n"
    "    --micro-batch-size 1 --global-batch-size 32 --lr 3e-4 2>&1 | tee log.txt\n";

static void test_megatron_script(void)
{
    struct config c;
    struct launch_info info;
    struct mt_err e;
    CHECK_EQ_INT(rd(llama_script, 0, &c, &info, &e), MT_OK);
    if (e.msg[0])
        fprintf(stderr, "%s\n", e.msg);
    CHECK_EQ_INT(info.kind, LAUNCH_MEGATRON);
    CHECK_EQ_INT(info.launched_gpus, 16); /* 8 a node x #SBATCH's 2 nodes */
    CHECK_EQ_INT(c.num_device, 16);
    CHECK_EQ_INT(c.cluster.tp, 2);
    CHECK_EQ_INT(config_pp(&c), 4);
    CHECK_EQ_INT(c.cluster.dp, 2);
    CHECK_EQ_INT(c.model.num_layers, 32); /* $(( 16 * 2 )) */
    CHECK_EQ_INT(c.model.num_key_value_heads, 8);
    CHECK_EQ_INT(c.model.vocab_size, 128256); /* a multiple of 128 x 2 already */
    CHECK(strcmp(c.model.name, "Llama-3.1-8B") == 0);
    CHECK_EQ_INT(c.model.arch, ARCH_LLAMA2);
    CHECK_EQ_INT(config_mlp(&c.model), MLP_SWIGLU);
    CHECK_EQ_INT(c.model.mlp, MLP_DEFAULT); /* the arch's: nothing to say in the JSON */
    CHECK_EQ_INT(c.scheme, SCHEME_V);
    CHECK_EQ_INT(c.global_batch_size, 32);
    CHECK_EQ_INT(config_microbatches(&c), 16);
    CHECK(info.warning[0] == '\0'); /* bf16 branch taken: no FP8; --lr skipped on purpose */
    /* --devices plans for another count and says the file's */
    CHECK_EQ_INT(rd(llama_script, 64, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(c.cluster.dp, 8);
    CHECK_STR_CONTAINS(info.assumed, "the file starts 16 GPUs");
}

static void test_megatron_rules(void)
{
    struct config c;
    struct launch_info info;
    struct mt_err e;
    /* GPT-3 175B as Megatron-LM's examples/gpt3 launches it: 50257 padded to 51200 at tp 8 */
    const char *gpt =
        "srun -N 16 --ntasks-per-node 8 python pretrain_gpt.py --num-layers 96 --hidden-size "
        "12288 --num-attention-heads 96 --seq-length 2048 --tokenizer-type GPT2BPETokenizer "
        "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 --micro-batch-size 1 "
        "--global-batch-size 1536 --fp16 --recompute-granularity full --recompute-method "
        "uniform --recompute-num-layers 1\n";
    CHECK_EQ_INT(rd(gpt, 0, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(c.num_device, 128);
    CHECK_EQ_INT(c.model.vocab_size, 51200);
    CHECK_EQ_INT(c.model.ffn_hidden_size, 4 * 12288);
    CHECK(strcmp(c.model.name, "GPT-3-175B") == 0);
    CHECK_EQ_INT(info.recompute, LAUNCH_RECOMPUTE_FULL);
    CHECK_STR_CONTAINS(info.warning, "--recompute-granularity full");
    CHECK_STR_CONTAINS(info.assumed, "50257");
    /* SwiGLU's FFN default: int((4h x 2/3) / 64) x 64 */
    const char *sw = "--num-layers 4 --hidden-size 4096 --num-attention-heads 32 --seq-length 128 "
                     "--vocab-size 32000 --swiglu --bf16 --frobnicate 3 --pipeline-model-parallel-"
                     "size 2 --num-virtual-stages-per-pipeline-rank 2 --global-batch-size 4\n";
    CHECK_EQ_INT(rd(sw, 2, &c, &info, &e), MT_OK);
    if (e.msg[0])
        fprintf(stderr, "%s\n", e.msg);
    CHECK_EQ_INT(c.model.ffn_hidden_size, 10880);
    CHECK_EQ_INT(c.scheme, SCHEME_W);
    CHECK_EQ_INT(c.chunks, 2);
    CHECK_STR_CONTAINS(info.warning, "not recognised: --frobnicate");
    /* without a GPU count a pasted flag list needs --devices */
    CHECK_EQ_INT(rd(sw, 0, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "give --devices N");
}

static void test_megatron_refusals(void)
{
    struct config c;
    struct launch_info info;
    struct mt_err e;
    const char *base = "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 "
                       "--hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
                       "--vocab-size 32000 --bf16 ";
    char buf[1024];
    /* experts read (issue 38), a layer pattern the cost model lacks refused at its place */
    snprintf(buf, sizeof buf, "%s--num-experts 8 --moe-router-topk 2\n", base);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_OK);
    CHECK(c.model.moe.num_experts == 8 && c.model.moe.router_topk == 2 &&
          c.model.moe.ffn_hidden_size == c.model.ffn_hidden_size);
    snprintf(buf, sizeof buf, "%s--num-experts 8 --moe-layer-freq 2\n", base);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "--moe-layer-freq '2'");
    CHECK_STR_CONTAINS(e.msg, "t.sh:1:");
    snprintf(buf, sizeof buf, "%s--context-parallel-size 2\n", base);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "issue 39");
    snprintf(buf, sizeof buf,
             "%s--tensor-model-parallel-size 8 --pipeline-model-parallel-size 16\n", base);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "starts 8 GPUs");
    CHECK_STR_CONTAINS(e.msg, "TP 8 x PP 16");
    /* an error at the flag's line and column, and the flag named */
    CHECK_EQ_INT(rd("X=1\npython pretrain_gpt.py \\\n  --num-layers abc\n", 1, &c, &info, &e),
                 MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "t.sh:3:16: --num-layers: 'abc' is not an integer");
    /* a value the script does not know */
    CHECK_EQ_INT(rd("python pretrain_gpt.py --num-layers $L --hidden-size 8 "
                    "--num-attention-heads 1 --seq-length 8 --vocab-size 8\n",
                    1, &c, &info, &e),
                 MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "$L is not set in the script");
    /* an assignment under a test of the file system */
    CHECK_EQ_INT(rd("if [ -f x ]; then\n  TP=4\nfi\npython pretrain_gpt.py --num-layers 2\n", 1,
                    &c, &info, &e),
                 MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "t.sh:2:3: TP is set inside an if");
    /* two launches */
    CHECK_EQ_INT(rd("python a.py --num-layers 2\npython b.py --num-layers 3\n", 1, &c, &info, &e),
                 MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "second launch");
    /* only a tokenizer model: no vocabulary to assume */
    CHECK_EQ_INT(rd("python pretrain_gpt.py --num-layers 2 --hidden-size 8 --num-attention-heads "
                    "1 --seq-length 8 --tokenizer-type HuggingFaceTokenizer --tokenizer-model "
                    "/m\n",
                    1, &c, &info, &e),
                 MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "--vocab-size");
}

static const char titan[] = "[model]\n"
                            "name = \"llama3\"\n"
                            "flavor = \"70B\"\n"
                            "[training]\n"
                            "local_batch_size = 16\n"
                            "seq_len = 4_096  # TOML allows _\n"
                            "[parallelism]\n"
                            "data_parallel_shard_degree = -1\n"
                            "tensor_parallel_degree = 8\n"
                            "pipeline_parallel_degree = 4\n"
                            "pipeline_parallel_schedule = \"Interleaved1F1B\"\n"
                            "[activation_checkpoint]\n"
                            "mode = 'none'\n";

static void test_torchtitan(void)
{
    struct config c;
    struct launch_info info;
    struct mt_err e;
    CHECK_EQ_INT(rd(titan, 64, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(info.kind, LAUNCH_TORCHTITAN);
    CHECK_EQ_INT(c.cluster.dp, 2); /* -1: 64 / (tp 8 x pp 4) */
    CHECK(c.distributed_optimizer && c.sequence_parallel);
    CHECK_EQ_INT(c.scheme, SCHEME_W);
    CHECK_EQ_INT(c.chunks, 2); /* torchtitan's 2 stages a rank */
    CHECK_EQ_INT(c.model.seq_length, 4096);
    CHECK_EQ_INT(c.model.ffn_hidden_size, 28672);
    CHECK(strcmp(c.model.name, "Llama-3.1-70B") == 0);
    CHECK_EQ_INT(c.micro_batch_size, 1);
    CHECK_EQ_INT(c.global_batch_size, 32); /* local 16 x dp 2 */
    CHECK_STR_CONTAINS(info.warning, "FSDP");
    /* -1 without --devices, a mesh that disagrees, a schedule not modelled, a syntax error */
    CHECK_EQ_INT(rd(titan, 0, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "t.sh:8:1: parallelism.data_parallel_shard_degree");
    CHECK_EQ_INT(rd(titan, 60, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "not a multiple");
    CHECK_EQ_INT(rd("[parallelism]\npipeline_parallel_degree = 2\n"
                    "pipeline_parallel_schedule = \"LoopedBFS\"\n",
                    2, &c, &info, &e),
                 MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "t.sh:3:1: parallelism.pipeline_parallel_schedule: 'LoopedBFS'");
    CHECK_EQ_INT(rd("[training]\nseq_len = \"8k\n", 1, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "t.sh:2:");
    CHECK_EQ_INT(rd("[parallelism]\ncontext_parallel_degree = 2\n", 2, &c, &info, &e),
                 MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "issue 39");
    /* torchtitan's MoE models: the flavors with a preset; others refused by name */
    CHECK_EQ_INT(rd("[model]\nname = \"deepseek_v3\"\n", 8, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "'debugmodel': not one of deepseek_v3's flavors");
    CHECK_EQ_INT(rd("[model]\nname = \"llama4\"\n", 8, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "chunked local attention");
    CHECK_EQ_INT(rd("[model]\nname = \"qwen3\"\nflavor = \"30B-A3B\"\n[parallelism]\n"
                    "expert_parallel_degree = 4\n", 8, &c, &info, &e), MT_OK);
    CHECK(c.model.moe.num_experts == 128 && c.cluster.ep == 4 && c.cluster.etp == 1);
}

/* The writers' text reads back to the config it was written from. */
static void test_round_trip(enum launch_kind k, const char *text, int devices)
{
    struct config c, d;
    struct launch_info info;
    struct mt_err e;
    CHECK_EQ_INT(rd(text, devices, &c, &info, &e), MT_OK);
    char *out = NULL;
    struct launch_write_opts wo = {0};
    CHECK_EQ_INT(launch_write(k, &c, &wo, &out, &e), MT_OK);
    if (out == NULL)
        return;
    CHECK_EQ_INT(rd(out, 0, &d, &info, &e), MT_OK);
    char *a = config_to_json(&c), *b = config_to_json(&d);
    char *sa = strstr(a, "\"model\""), *sb = strstr(b, "\"model\""); /* after "source" */
    CHECK(sa && sb && strcmp(sa, sb) == 0);
    CHECK_EQ_INT(c.scheme, d.scheme);
    CHECK_EQ_INT(c.num_device, d.num_device);
    CHECK_EQ_INT(c.global_batch_size, d.global_batch_size);
    free(a);
    free(b);
    free(out);
}

static void test_writers(void)
{
    test_round_trip(LAUNCH_MEGATRON, llama_script, 0);
    test_round_trip(LAUNCH_TORCHTITAN, titan, 64);
    test_round_trip(LAUNCH_MEGATRON, titan, 64);
    struct config c, n;
    struct mt_err e;
    config_default(&c);
    c.scheme = SCHEME_ZBH1;
    CHECK_EQ_INT(launch_expressible(LAUNCH_MEGATRON, &c, &n, &e), MT_EUNSUPPORTED);
    CHECK_STR_CONTAINS(e.msg, "no flag for ZB-H1");
    CHECK_EQ_INT(n.scheme, SCHEME_V);
    /* torchtitan: ZB-H1 only as a CSV; a V it does not name is its ZBVZeroBubble */
    struct launch_info info;
    CHECK_EQ_INT(rd(titan, 64, &c, &info, &e), MT_OK);
    c.scheme = SCHEME_ZBH1;
    CHECK_EQ_INT(launch_expressible(LAUNCH_TORCHTITAN, &c, &n, &e), MT_OK);
    CHECK(launch_needs_csv(LAUNCH_TORCHTITAN, &c));
    char *out = NULL;
    struct launch_write_opts wo = {.csv_name = "job.schedule.csv"};
    CHECK_EQ_INT(launch_write(LAUNCH_TORCHTITAN, &c, &wo, &out, &e), MT_OK);
    CHECK(out && strstr(out, "pipeline_parallel_schedule_csv = \"job.schedule.csv\""));
    free(out);
    c.scheme = SCHEME_ZBV;
    CHECK_EQ_INT(launch_expressible(LAUNCH_TORCHTITAN, &c, &n, &e), MT_EUNSUPPORTED);
    CHECK_EQ_INT(n.scheme, SCHEME_ZBV_TORCH);
    config_default(&c); /* GPT3-1.6B of the paper: no torchtitan flavor */
    CHECK_EQ_INT(launch_expressible(LAUNCH_TORCHTITAN, &c, &n, &e), MT_EUNSUPPORTED);
    CHECK_STR_CONTAINS(e.msg, "flavor");
}

static void test_detect(void)
{
    enum launch_kind k;
    CHECK(!launch_detect("{\"model\": \"--num-layers\"}", 25, &k));
    CHECK(!launch_detect("[{\"name\": \"F_0,0\"}]", 19, &k));
    CHECK(launch_detect("# x\n[parallelism]\n", 18, &k) && k == LAUNCH_TORCHTITAN);
    CHECK(launch_detect("python pretrain_gpt.py\n", 23, &k) && k == LAUNCH_MEGATRON);
    CHECK(!launch_detect("0F0,1F0\n", 8, &k));
}

int main(void)
{
    test_detect();
    test_megatron_script();
    test_megatron_rules();
    test_megatron_refusals();
    test_torchtitan();
    test_writers();
    return check_report("test_launch");
}
