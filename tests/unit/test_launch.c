/* tests/unit/test_launch.c: the launch readers and writers (model/launch.h) against values
 * known without them: the bash a Megatron-LM script is written in (arrays split as bash
 * splits them, ${VAR:-default}, $((...)), if branches), Megatron-LM's own rules (its padded
 * vocabulary: 50257 -> 51200 at tp 8, GPT-3 175B's embedding in Megatron; its SwiGLU FFN
 * default int(8h/3 / 64) x 64 = 10880 at h = 4096), torchtitan's (the -1 degree takes the GPUs
 * left; 2 stages a rank for a looped schedule), the refusals (experts: issue 38; context
 * parallelism read as cp; too few GPUs for the degrees), errors at line:column, and writers
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

/* Megatron-LM's README's overlaps on a tp-8 flag list */
static const char overlap_flags[] =
    "--num-layers 4 --hidden-size 4096 --num-attention-heads 32 --seq-length 128 "
    "--vocab-size 32000 --bf16 --tensor-model-parallel-size 8 --sequence-parallel "
    "--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather "
    "--tp-comm-overlap --global-batch-size 4\n";

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
    /* full, uniform, 1: the config's recompute full (model/launch.c), so no warning of it */
    CHECK_EQ_INT(c.recompute, RECOMPUTE_FULL);
    CHECK(strstr(info.warning, "recompute") == NULL);
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
    /* the README's overlaps (Megatron-LM's H100 table): read into the cluster, not warned */
    CHECK_EQ_INT(rd(overlap_flags, 16, &c, &info, &e), MT_OK);
    CHECK(c.cluster.tp_comm_overlap && c.cluster.overlap_grad_reduce &&
          c.cluster.overlap_param_gather);
    CHECK(strstr(info.warning, "overlap") == NULL);
    CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
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
    /* cp is modelled now (test_context_parallel); 3 does not divide the 8 GPUs started */
    snprintf(buf, sizeof buf, "%s--context-parallel-size 3\n", base);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "not a multiple of TP 1 x CP 3 x PP 1 = 3");
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
    CHECK(c.sequence_parallel);
    /* FSDP2 over the shard degree: ZeRO-3; under PP "default" keeps the gathered parameters
     * (torchtitan/distributed/fsdp.py) */
    CHECK_EQ_INT(config_zero_stage(&c), 3);
    CHECK_EQ_INT(config_dp_shard(&c), 2);
    CHECK_EQ_INT(config_dp_replicate(&c), 1);
    CHECK(!config_fsdp_reshard_after_forward(&c));
    CHECK_EQ_INT(c.scheme, SCHEME_W);
    CHECK_EQ_INT(c.chunks, 2); /* torchtitan's 2 stages a rank */
    CHECK_EQ_INT(c.model.seq_length, 4096);
    CHECK_EQ_INT(c.model.ffn_hidden_size, 28672);
    CHECK(strcmp(c.model.name, "Llama-3.1-70B") == 0);
    CHECK_EQ_INT(c.micro_batch_size, 1);
    CHECK_EQ_INT(c.global_batch_size, 32); /* local 16 x dp 2 */
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
    /* torchtitan's MoE models: the flavors with a preset; others refused by name */
    CHECK_EQ_INT(rd("[model]\nname = \"deepseek_v3\"\n", 8, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "'debugmodel': not one of deepseek_v3's flavors");
    CHECK_EQ_INT(rd("[model]\nname = \"llama4\"\n", 8, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "chunked local attention");
    /* torchtitan's default data parallelism is FSDP, whose expert mesh (efsdp) is not
     * modelled yet: refused by name; with plain DDP the experts are read */
    CHECK_EQ_INT(rd("[model]\nname = \"qwen3\"\nflavor = \"30B-A3B\"\n[parallelism]\n"
                    "expert_parallel_degree = 4\n", 8, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "efsdp mesh) is not modelled yet");
    CHECK_EQ_INT(rd("[model]\nname = \"qwen3\"\nflavor = \"30B-A3B\"\n[parallelism]\n"
                    "data_parallel_replicate_degree = 8\ndata_parallel_shard_degree = 1\n"
                    "expert_parallel_degree = 4\n", 8, &c, &info, &e), MT_OK);
    CHECK(c.model.moe.num_experts == 128 && c.cluster.ep == 4 && c.cluster.etp == 1);
}

static void test_round_trip(enum launch_kind k, const char *text, int devices);

/* Context parallelism read as the config's cp (model/config_parallel.c): Megatron's world
 * tp x cp x pp x dp, its --cp-comm-type (allgather its spelling of all_gather; one type for
 * every layer), torchtitan's context_parallel_degree and rotate method (allgather, its
 * default, is all_gather; alltoall the p2p ring), and both written back. */
static void test_context_parallel(void)
{
    struct config c;
    struct launch_info info;
    struct mt_err e;
    const char *mt = "torchrun --nproc-per-node 8 --nnodes 4 pretrain_gpt.py --num-layers 32 "
                     "--hidden-size 4096 --num-attention-heads 32 --seq-length 32768 "
                     "--vocab-size 32000 --bf16 --tensor-model-parallel-size 4 "
                     "--pipeline-model-parallel-size 2 --sequence-parallel "
                     "--context-parallel-size 2 ";
    char buf[1024];
    snprintf(buf, sizeof buf, "%s\n", mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(c.cluster.cp, 2);
    CHECK_EQ_INT(c.cluster.cp_comm_type, CP_COMM_P2P); /* Megatron's default */
    CHECK_EQ_INT(c.cluster.dp, 2);                     /* 32 / (4 x 2 x 2) */
    CHECK_EQ_INT(config_pp(&c), 2);
    CHECK_EQ_INT(c.num_device, 32);
    snprintf(buf, sizeof buf, "%s--cp-comm-type allgather allgather\n", mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(c.cluster.cp_comm_type, CP_COMM_ALL_GATHER);
    snprintf(buf, sizeof buf, "%s--cp-comm-type=a2a+p2p\n", mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(c.cluster.cp_comm_type, CP_COMM_A2A_P2P);
    snprintf(buf, sizeof buf, "%s--cp-comm-type p2p a2a\n", mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "a type a layer is not modelled");
    snprintf(buf, sizeof buf, "%s--cp-comm-type ring\n", mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "--cp-comm-type: 'ring'");
    /* 32 GPUs for TP 4 x CP 4 x PP 4 = 64 */
    snprintf(buf, sizeof buf, "%s--context-parallel-size 4 --pipeline-model-parallel-size 4\n",
             mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "starts 32 GPUs");
    CHECK_STR_CONTAINS(e.msg, "TP 4 x CP 4 x PP 4 = 64");
    /* written back: the flags, and the same config read again */
    snprintf(buf, sizeof buf, "%s--cp-comm-type allgather\n", mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_OK);
    char *out = NULL;
    struct launch_write_opts wo = {0};
    CHECK_EQ_INT(launch_write(LAUNCH_MEGATRON, &c, &wo, &out, &e), MT_OK);
    CHECK(out && strstr(out, "--context-parallel-size 2\n    --cp-comm-type allgather\n"));
    free(out);
    /* torchtitan: 64 GPUs = shard 2 x tp 8 x pp 2 x cp 2 */
    const char *tt = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
                     "data_parallel_shard_degree = -1\ntensor_parallel_degree = 8\n"
                     "pipeline_parallel_degree = 2\ncontext_parallel_degree = 2\n";
    CHECK_EQ_INT(rd(tt, 64, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(c.cluster.cp, 2);
    CHECK_EQ_INT(c.cluster.dp, 2);
    CHECK_EQ_INT(c.cluster.cp_comm_type, CP_COMM_ALL_GATHER); /* torchtitan's default */
    snprintf(buf, sizeof buf, "%scontext_parallel_rotate_method = \"alltoall\"\n", tt);
    CHECK_EQ_INT(rd(buf, 64, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(c.cluster.cp_comm_type, CP_COMM_P2P);
    CHECK_EQ_INT(launch_write(LAUNCH_TORCHTITAN, &c, &wo, &out, &e), MT_OK);
    CHECK(out && strstr(out, "context_parallel_degree = 2\n"
                             "context_parallel_rotate_method = \"alltoall\"\n"));
    free(out);
    snprintf(buf, sizeof buf, "%scontext_parallel_rotate_method = \"ring\"\n", tt);
    CHECK_EQ_INT(rd(buf, 64, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "context_parallel_rotate_method: 'ring'");
    /* Ulysses (a2a) has no torchtitan setting: the nearest is the p2p ring */
    struct config n;
    CHECK_EQ_INT(rd(tt, 64, &c, &info, &e), MT_OK);
    c.cluster.cp_comm_type = CP_COMM_A2A;
    CHECK_EQ_INT(launch_expressible(LAUNCH_TORCHTITAN, &c, &n, &e), MT_EUNSUPPORTED);
    CHECK_EQ_INT(n.cluster.cp_comm_type, CP_COMM_P2P);
    test_round_trip(LAUNCH_MEGATRON, tt, 64);
    test_round_trip(LAUNCH_TORCHTITAN, tt, 64);
}

/* The launch's recompute settings and their text written back (Megatron-core's
 * TransformerConfig checks: full needs uniform|block and 1 .. L/pp layers, selective no layer
 * count; torchtitan's selective_ac_option, default "2"). */
static void rc_round_trip(enum launch_kind k, const char *text, int devices, const char *want)
{
    struct config c, d;
    struct launch_info info, back;
    struct mt_err e;
    CHECK_EQ_INT(rd(text, devices, &c, &info, &e), MT_OK);
    char *out = NULL;
    struct launch_write_opts wo = {.recompute = info.recompute, .ac = &info.ac};
    CHECK_EQ_INT(launch_write(k, &c, &wo, &out, &e), MT_OK);
    CHECK(out && strstr(out, want));
    CHECK_EQ_INT(rd(out, 0, &d, &back, &e), MT_OK);
    CHECK_EQ_INT(back.ac.granularity, info.ac.granularity);
    CHECK_EQ_INT(back.ac.method, info.ac.method);
    CHECK_EQ_INT(back.ac.num_layers, info.ac.num_layers);
    CHECK(strcmp(back.ac.modules, info.ac.modules) == 0);
    free(out);
}

static void test_recompute(void)
{
    struct config c;
    struct launch_info info;
    struct mt_err e;
    const char *mt = "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 "
                     "--hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
                     "--vocab-size 32000 --bf16 --pipeline-model-parallel-size 2 ";
    char buf[1024];
    snprintf(buf, sizeof buf, "%s--recompute-granularity full --recompute-method block "
                              "--recompute-num-layers 2\n", mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(info.recompute, LAUNCH_RECOMPUTE_FULL);
    CHECK_EQ_INT(info.ac.method, LAUNCH_RC_BLOCK);
    CHECK_EQ_INT(info.ac.num_layers, 2);
    rc_round_trip(LAUNCH_MEGATRON, buf, 0,
                  "--recompute-granularity full\n    --recompute-method block\n"
                  "    --recompute-num-layers 2\n");
    snprintf(buf, sizeof buf, "%s--recompute-granularity=full --recompute-method=uniform "
                              "--recompute-num-layers=16\n", mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(info.ac.method, LAUNCH_RC_UNIFORM);
    CHECK_EQ_INT(info.ac.num_layers, 16);
    rc_round_trip(LAUNCH_MEGATRON, buf, 0, "--recompute-method uniform\n");
    /* 17 > 32 layers / pp 2 */
    snprintf(buf, sizeof buf, "%s--recompute-granularity full --recompute-method uniform "
                              "--recompute-num-layers 17\n", mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "--recompute-num-layers: 17 is out of range [1, 16]");
    snprintf(buf, sizeof buf, "%s--recompute-granularity full --recompute-num-layers 1\n", mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "needs --recompute-method uniform or block");
    snprintf(buf, sizeof buf, "%s--recompute-granularity full --recompute-method uniform\n", mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "needs --recompute-num-layers between 1 and the 16 layers");
    snprintf(buf, sizeof buf, "%s--recompute-granularity selective --recompute-num-layers 1\n",
             mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "with selective recompute");
    snprintf(buf, sizeof buf, "%s--recompute-granularity partial\n", mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "'partial' (expected full or selective)");
    snprintf(buf, sizeof buf, "%s--recompute-granularity selective --recompute-modules core_attn "
                              "mlp --bf16\n", mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(info.recompute, LAUNCH_RECOMPUTE_SELECTIVE);
    CHECK(strcmp(info.ac.modules, "core_attn mlp") == 0);
    CHECK_STR_CONTAINS(info.warning, "--recompute-modules core_attn mlp");
    rc_round_trip(LAUNCH_MEGATRON, buf, 0,
                  "--recompute-granularity selective\n    --recompute-modules core_attn mlp\n");
    /* a method alone: Megatron recomputes nothing */
    snprintf(buf, sizeof buf, "%s--recompute-method block\n", mt);
    CHECK_EQ_INT(rd(buf, 0, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(info.recompute, LAUNCH_RECOMPUTE_NONE);
    CHECK_STR_CONTAINS(info.warning, "without --recompute-granularity");
    /* torchtitan: selective is its default, every 2nd block */
    const char *tt = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
                     "pipeline_parallel_degree = 2\n";
    CHECK_EQ_INT(rd(tt, 8, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(info.recompute, LAUNCH_RECOMPUTE_SELECTIVE);
    CHECK_EQ_INT(info.ac.method, LAUNCH_RC_EVERY_NTH);
    CHECK_EQ_INT(info.ac.num_layers, 2);
    rc_round_trip(LAUNCH_TORCHTITAN, tt, 8, "mode = \"selective\"\nselective_ac_option = \"2\"\n");
    snprintf(buf, sizeof buf, "%s[activation_checkpoint]\nmode = \"selective\"\n"
                              "selective_ac_option = \"op\"\n", tt);
    CHECK_EQ_INT(rd(buf, 8, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(info.ac.method, LAUNCH_RC_PER_OP);
    rc_round_trip(LAUNCH_TORCHTITAN, buf, 8, "selective_ac_option = \"op\"\n");
    snprintf(buf, sizeof buf, "%s[activation_checkpoint]\nselective_ac_option = \"0\"\n", tt);
    CHECK_EQ_INT(rd(buf, 8, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "selective_ac_option: '0'");
    snprintf(buf, sizeof buf, "%s[activation_checkpoint]\nmode = \"full\"\n", tt);
    rc_round_trip(LAUNCH_TORCHTITAN, buf, 8, "mode = \"full\"\n");
}

/* The readers' FSDP keys (model/config_zero.c): torchtitan's shard and replicate degrees (HSDP)
 * and fsdp_reshard_after_forward; Megatron's --use-torch-fsdp2, --use-megatron-fsdp and
 * --data-parallel-sharding-strategy (megatron/training/arguments.py's choices). */
static void test_fsdp_keys(void)
{
    struct config c;
    struct launch_info info;
    struct mt_err e;
    const char *hsdp = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
                       "data_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 4\n"
                       "fsdp_reshard_after_forward = \"always\"\n";
    CHECK_EQ_INT(rd(hsdp, 8, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(c.cluster.dp, 8);
    CHECK_EQ_INT(config_zero_stage(&c), 3);
    CHECK_EQ_INT(config_dp_shard(&c), 4);
    CHECK_EQ_INT(config_dp_replicate(&c), 2);
    CHECK_EQ_INT(c.cluster.reshard_after_forward, FSDP_RESHARD_ALWAYS);
    CHECK(config_fsdp_reshard_after_forward(&c));
    /* no pipeline: "default" reshards (torchtitan's get_fsdp_reshard_after_forward_policy) */
    CHECK_EQ_INT(rd("[parallelism]\ndata_parallel_shard_degree = 8\n", 8, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(config_zero_stage(&c), 3);
    CHECK(config_fsdp_reshard_after_forward(&c));
    /* replicate alone is DDP: nothing sharded */
    CHECK_EQ_INT(rd("[parallelism]\ndata_parallel_replicate_degree = 8\n"
                    "data_parallel_shard_degree = 1\n", 8, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(config_zero_stage(&c), 0);
    CHECK_EQ_INT(config_dp_replicate(&c), 8);
    CHECK_EQ_INT(rd("[parallelism]\ndata_parallel_shard_degree = 8\n"
                    "fsdp_reshard_after_forward = \"sometimes\"\n", 8, &c, &info, &e),
                 MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "t.sh:3:1: parallelism.fsdp_reshard_after_forward");
    const char *base = "--num-layers 4 --hidden-size 4096 --num-attention-heads 32 --seq-length "
                       "128 --vocab-size 32000 --bf16 --global-batch-size 8 ";
    char text[512];
    snprintf(text, sizeof text, "%s--use-megatron-fsdp\n", base);
    CHECK_EQ_INT(rd(text, 8, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(config_zero_stage(&c), 3); /* optim_grads_params, Megatron's default */
    snprintf(text, sizeof text, "%s--use-custom-fsdp --data-parallel-sharding-strategy optim_grads\n",
             base);
    CHECK_EQ_INT(rd(text, 8, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(config_zero_stage(&c), 2);
    snprintf(text, sizeof text, "%s--use-torch-fsdp2\n", base);
    CHECK_EQ_INT(rd(text, 8, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(config_zero_stage(&c), 3);
    snprintf(text, sizeof text, "%s--use-torch-fsdp2 --pipeline-model-parallel-size 2\n", base);
    CHECK_EQ_INT(rd(text, 8, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "--use-torch-fsdp2 with pipeline parallelism 2");
    snprintf(text, sizeof text, "%s--use-megatron-fsdp --data-parallel-sharding-strategy all\n",
             base);
    CHECK_EQ_INT(rd(text, 8, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "--data-parallel-sharding-strategy: 'all'");
    /* written and read back: Megatron FSDP's flags, torchtitan's HSDP degrees */
    CHECK_EQ_INT(rd(hsdp, 8, &c, &info, &e), MT_OK);
    char *out = NULL;
    struct launch_write_opts wo = {0};
    CHECK_EQ_INT(launch_write(LAUNCH_TORCHTITAN, &c, &wo, &out, &e), MT_OK);
    CHECK(out && strstr(out, "data_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 4"));
    CHECK(out && strstr(out, "fsdp_reshard_after_forward = \"always\""));
    free(out);
    out = NULL;
    c.cluster.zero_stage = 2;
    c.cluster.reshard_after_forward = FSDP_RESHARD_DEFAULT;
    struct config n;
    CHECK_EQ_INT(launch_expressible(LAUNCH_MEGATRON, &c, &n, &e), MT_EUNSUPPORTED);
    CHECK_STR_CONTAINS(e.msg, "(HSDP) has no flag");
    CHECK_EQ_INT(n.cluster.dp_shard, 0);
    c.cluster.dp_shard = 0;
    CHECK_EQ_INT(launch_write(LAUNCH_MEGATRON, &c, &wo, &out, &e), MT_OK);
    CHECK(out && strstr(out, "--data-parallel-sharding-strategy optim_grads\n"));
    free(out);
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
    test_round_trip(LAUNCH_MEGATRON, overlap_flags, 16); /* the overlaps written back */
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

/* FP8: Megatron's --fp8-format turns it on (its --fp8-recipe default is delayed), torchtitan's
 * float8 converter is tensorwise; both write back and read again; rowwise and custom refused */
static void test_fp8(void)
{
    static const char mlm[] =
        "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
        "--ffn-hidden-size 14336 --num-attention-heads 32 --group-query-attention "
        "--num-query-groups 8 --seq-length 8192 --max-position-embeddings 8192 --vocab-size "
        "128256 --swiglu --normalization RMSNorm --disable-bias-linear "
        "--untie-embeddings-and-output-weights --bf16 --fp8-format e4m3 --fp8-recipe blockwise "
        "--fp8-param-gather --fp8-amax-history-len 1024 --use-distributed-optimizer "
        "--micro-batch-size 1 --global-batch-size 64\n";
    struct config c;
    struct launch_info info;
    struct mt_err e;
    CHECK_EQ_INT(rd(mlm, 0, &c, &info, &e), MT_OK);
    if (e.msg[0])
        fprintf(stderr, "%s\n", e.msg);
    CHECK_EQ_INT(c.cluster.fp8_recipe, FP8_BLOCKWISE);
    CHECK_EQ_INT(c.cluster.fp8_format, FP8_FORMAT_E4M3);
    CHECK(c.cluster.fp8_param_gather);
    CHECK(strcmp(c.cluster.device.name, "H100-80G") == 0); /* the A100 default has no FP8 */
    CHECK_STR_CONTAINS(info.assumed, "device H100-80G (the launch trains in FP8");
    CHECK(strstr(info.warning, "fp8") == NULL); /* read, not warned about */
    test_round_trip(LAUNCH_MEGATRON, mlm, 0);
    char *out = NULL;
    struct launch_write_opts wo = {0};
    CHECK_EQ_INT(launch_write(LAUNCH_MEGATRON, &c, &wo, &out, &e), MT_OK);
    CHECK(out && strstr(out, "--fp8-format e4m3\n    --fp8-recipe blockwise\n    "
                             "--fp8-param-gather\n"));
    free(out);
    /* the recipe's default; a recipe without a format trains in bf16 (said) */
    static const char delayed[] = "--num-layers 2 --hidden-size 256 --num-attention-heads 4 "
                                  "--seq-length 128 --vocab-size 1024 --fp8-format hybrid\n";
    CHECK_EQ_INT(rd(delayed, 1, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(c.cluster.fp8_recipe, FP8_DELAYED);
    static const char nofmt[] = "--num-layers 2 --hidden-size 256 --num-attention-heads 4 "
                                "--seq-length 128 --vocab-size 1024 --fp8-recipe tensorwise\n";
    CHECK_EQ_INT(rd(nofmt, 1, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(c.cluster.fp8_recipe, FP8_NONE);
    CHECK_STR_CONTAINS(info.warning, "--fp8-recipe without --fp8-format");
    static const char custom[] = "--num-layers 2 --hidden-size 256 --num-attention-heads 4 "
                                 "--seq-length 128 --vocab-size 1024 --fp8-format hybrid "
                                 "--fp8-recipe custom\n";
    CHECK_EQ_INT(rd(custom, 1, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "t.sh:1:");
    CHECK_STR_CONTAINS(e.msg, "--fp8-recipe: 'custom' is not modelled");
    /* torchtitan: the 2025-10 spelling, and the earlier converter name with its table */
    static const char tt[] = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
                             "converters = [\"quantize.linear.float8\"]\n"
                             "[quantize.linear.float8]\nfilter_fqns = [\"output\"]\n"
                             "enable_fsdp_float8_all_gather = true\n"
                             "[parallelism]\ndata_parallel_shard_degree = 8\n";
    CHECK_EQ_INT(rd(tt, 8, &c, &info, &e), MT_OK);
    if (e.msg[0])
        fprintf(stderr, "%s\n", e.msg);
    CHECK_EQ_INT(c.cluster.fp8_recipe, FP8_TENSORWISE);
    CHECK(c.cluster.fp8_param_gather);
    test_round_trip(LAUNCH_TORCHTITAN, tt, 8);
    static const char tt_old[] = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
                                 "converters = \"float8\"\n[float8]\n"
                                 "recipe_name = \"tensorwise\"\n";
    CHECK_EQ_INT(rd(tt_old, 8, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(c.cluster.fp8_recipe, FP8_TENSORWISE);
    CHECK_STR_CONTAINS(info.warning, "float8.filter_fqns without \"output\"");
    static const char tt_rw[] = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
                                "converters = [\"float8\"]\n[float8]\n"
                                "recipe_name = \"rowwise\"\n";
    CHECK_EQ_INT(rd(tt_rw, 8, &c, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "t.sh:6:");
    CHECK_STR_CONTAINS(e.msg, "per-row float8 scaling is not modelled");
    static const char tt_mx[] = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
                                "converters = [\"mx\"]\n";
    CHECK_EQ_INT(rd(tt_mx, 8, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(c.cluster.fp8_recipe, FP8_MXFP8);
    CHECK(strcmp(c.cluster.device.name, "B200") == 0);
    test_round_trip(LAUNCH_TORCHTITAN, tt_mx, 8);
    /* torchtitan has no delayed or blockwise recipe: the nearest is tensorwise */
    struct config n;
    CHECK_EQ_INT(rd(mlm, 0, &c, &info, &e), MT_OK);
    CHECK_EQ_INT(launch_expressible(LAUNCH_TORCHTITAN, &c, &n, &e), MT_EUNSUPPORTED);
    CHECK_STR_CONTAINS(e.msg, "no blockwise recipe");
    CHECK_EQ_INT(n.cluster.fp8_recipe, FP8_TENSORWISE);
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
    test_fsdp_keys();
    test_writers();
    test_context_parallel();
    test_recompute();
    test_fp8();
    return check_report("test_launch");
}
