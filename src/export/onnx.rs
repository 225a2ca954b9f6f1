//! ONNX from a gait actor: the protobuf messages gait needs (hand-written `prost` derives, as
//! for TensorBoard: no `protoc`, no generated schema; tags from `onnx.proto3`) and the graph of
//! the deterministic policy, normalizer and clip inside.
//!
//! IR version 8 and opset 17 (what ONNX 1.12 writes; every onnxruntime since 1.12 runs it), only
//! standard ops. Inputs and outputs follow the names robot stacks expect (Isaac Lab's
//! exporter): feed-forward `obs [N, obs_dim] -> actions [N, act_dim]`; LSTM
//! `obs [1, obs_dim], h_in, c_in [layers, 1, hidden] -> actions, h_out, c_out`. The LSTM is
//! written with plain ops, one cell per layer in PyTorch's gate order (i, f, g, o), so it is
//! the computation gait's rollouts run, not ONNX's `LSTM` op with its own gate order.

use anyhow::{bail, ensure, Context, Result};
use prost::Message;
use tch::Tensor;

use crate::policies::{Actor, Arch, Nonlinearity};

/// The ONNX IR version written.
pub const IR_VERSION: i64 = 8;
/// The default-domain opset written.
pub const OPSET: i64 = 17;

#[derive(Clone, PartialEq, Message)]
pub struct ModelProto {
    #[prost(int64, tag = "1")]
    pub ir_version: i64,
    #[prost(string, tag = "2")]
    pub producer_name: String,
    #[prost(string, tag = "3")]
    pub producer_version: String,
    #[prost(string, tag = "6")]
    pub doc_string: String,
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
    #[prost(message, repeated, tag = "14")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct OperatorSetIdProto {
    #[prost(string, tag = "1")]
    pub domain: String,
    #[prost(int64, tag = "2")]
    pub version: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct StringStringEntryProto {
    #[prost(string, tag = "1")]
    pub key: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct GraphProto {
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct NodeProto {
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    #[prost(string, tag = "3")]
    pub name: String,
    #[prost(string, tag = "4")]
    pub op_type: String,
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
}

/// `AttributeProto.AttributeType`: FLOAT = 1, INT = 2.
const ATTR_FLOAT: i32 = 1;
const ATTR_INT: i32 = 2;

#[derive(Clone, PartialEq, Message)]
pub struct AttributeProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(float, tag = "2")]
    pub f: f32,
    #[prost(int64, tag = "3")]
    pub i: i64,
    #[prost(int32, tag = "20")]
    pub r#type: i32,
}

/// `TensorProto.DataType`: FLOAT = 1, INT64 = 7.
const FLOAT: i32 = 1;
const INT64: i32 = 7;

#[derive(Clone, PartialEq, Message)]
pub struct TensorProto {
    #[prost(int64, repeated, tag = "1")]
    pub dims: Vec<i64>,
    #[prost(int32, tag = "2")]
    pub data_type: i32,
    #[prost(string, tag = "8")]
    pub name: String,
    /// Little-endian values.
    #[prost(bytes = "vec", tag = "9")]
    pub raw_data: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ValueInfoProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TypeProto {
    #[prost(message, optional, tag = "1")]
    pub tensor_type: Option<TypeTensor>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TypeTensor {
    #[prost(int32, tag = "1")]
    pub elem_type: i32,
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TensorShapeProto {
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<Dimension>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Dimension {
    #[prost(oneof = "DimValue", tags = "1, 2")]
    pub value: Option<DimValue>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum DimValue {
    #[prost(int64, tag = "1")]
    Fixed(i64),
    #[prost(string, tag = "2")]
    Named(String),
}

/// One dimension of a graph input or output.
#[derive(Debug, Clone)]
pub enum Dim {
    Fixed(usize),
    /// A symbolic size (the feed-forward batch).
    Named(&'static str),
}

fn value_info(name: &str, dims: &[Dim]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| Dimension {
            value: Some(match d {
                Dim::Fixed(n) => DimValue::Fixed(*n as i64),
                Dim::Named(s) => DimValue::Named(s.to_string()),
            }),
        })
        .collect();
    ValueInfoProto {
        name: name.to_string(),
        r#type: Some(TypeProto {
            tensor_type: Some(TypeTensor {
                elem_type: FLOAT,
                shape: Some(TensorShapeProto { dim }),
            }),
        }),
    }
}

/// Builds a graph node by node, naming intermediate values `t0, t1, ...`.
#[derive(Default)]
struct Graph {
    nodes: Vec<NodeProto>,
    initializers: Vec<TensorProto>,
    next: usize,
}

impl Graph {
    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("t{}", self.next - 1)
    }

    /// A float initializer from a CPU tensor (any shape; f32 values copied as they are).
    fn weight(&mut self, name: &str, t: &Tensor) -> Result<String> {
        let t = t.to_device(tch::Device::Cpu).to_kind(tch::Kind::Float).contiguous();
        let dims = t.size();
        let values = Vec::<f32>::try_from(t.flatten(0, -1)).context("reading a weight")?;
        let raw_data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.initializers.push(TensorProto {
            dims,
            data_type: FLOAT,
            name: name.to_string(),
            raw_data,
        });
        Ok(name.to_string())
    }

    fn float_constant(&mut self, name: &str, values: &[f32], dims: &[i64]) -> String {
        self.initializers.push(TensorProto {
            dims: dims.to_vec(),
            data_type: FLOAT,
            name: name.to_string(),
            raw_data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        });
        name.to_string()
    }

    fn int_constant(&mut self, name: &str, values: &[i64]) -> String {
        self.initializers.push(TensorProto {
            dims: vec![values.len() as i64],
            data_type: INT64,
            name: name.to_string(),
            raw_data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        });
        name.to_string()
    }

    /// Adds `op(inputs) -> outputs` and returns the outputs' names.
    fn op_n(
        &mut self,
        op: &str,
        inputs: &[&str],
        outputs: Vec<String>,
        attribute: Vec<AttributeProto>,
    ) -> Vec<String> {
        let name = format!("{op}_{}", self.nodes.len());
        self.nodes.push(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: outputs.clone(),
            name,
            op_type: op.to_string(),
            attribute,
        });
        outputs
    }

    /// `op(inputs)` with one fresh output.
    fn op(&mut self, op: &str, inputs: &[&str], attribute: Vec<AttributeProto>) -> String {
        let out = self.fresh();
        self.op_n(op, inputs, vec![out], attribute).remove(0)
    }

    /// `x · Wᵀ + b` (a `tch` linear layer, weight `[out, in]`).
    fn linear(&mut self, x: &str, weight: &str, bias: &str) -> String {
        self.op("Gemm", &[x, weight, bias], vec![int_attr("transB", 1)])
    }

    fn activation(&mut self, act: Nonlinearity, x: &str) -> String {
        match act {
            Nonlinearity::Relu => self.op("Relu", &[x], vec![]),
            Nonlinearity::Tanh => self.op("Tanh", &[x], vec![]),
            Nonlinearity::Sigmoid => self.op("Sigmoid", &[x], vec![]),
            Nonlinearity::Elu => self.op("Elu", &[x], vec![float_attr("alpha", 1.0)]),
        }
    }
}

fn int_attr(name: &str, i: i64) -> AttributeProto {
    AttributeProto { name: name.to_string(), f: 0.0, i, r#type: ATTR_INT }
}

fn float_attr(name: &str, f: f32) -> AttributeProto {
    AttributeProto { name: name.to_string(), f, i: 0, r#type: ATTR_FLOAT }
}

/// The actor's parameter `name` (checked to exist).
fn param(actor: &Actor, name: &str) -> Result<Tensor> {
    actor
        .var_store()
        .variables()
        .remove(name)
        .with_context(|| format!("the actor has no parameter '{name}'"))
}

/// The ONNX model of `actor`'s deterministic policy, with `metadata` as `metadata_props`.
pub fn model(actor: &Actor, metadata: &[(String, String)]) -> Result<ModelProto> {
    let spec = actor.spec();
    let mut g = Graph::default();
    let recurrent = spec.arch == Arch::Lstm;
    let batch = if recurrent { Dim::Fixed(1) } else { Dim::Named("batch") };
    let mut inputs = vec![value_info("obs", &[batch.clone(), Dim::Fixed(spec.obs_dim)])];
    let mut outputs = vec![value_info("actions", &[batch, Dim::Fixed(spec.act_dim)])];

    // Normalizer: (obs − mean) / std, then the clip. `Div`, not `Mul` by a reciprocal, so the
    // floats are the ones training computed.
    let mean = g.weight("obs_norm.mean", &param(actor, "obs_norm.mean")?)?;
    let std = g.weight("obs_norm.std", &param(actor, "obs_norm.std")?)?;
    let centred = g.op("Sub", &["obs", &mean], vec![]);
    let mut x = g.op("Div", &[&centred, &std], vec![]);
    if let Some(c) = spec.obs_clip {
        let lo = g.float_constant("clip_min", &[-c], &[]);
        let hi = g.float_constant("clip_max", &[c], &[]);
        x = g.op("Clip", &[&x, &lo, &hi], vec![]);
    }

    x = match spec.arch {
        Arch::Ff => feed_forward(&mut g, actor, &x)?,
        Arch::Lstm => lstm(&mut g, actor, &x, &mut inputs, &mut outputs)?,
    };
    let w = g.weight("means.weight", &param(actor, "means.weight")?)?;
    let b = g.weight("means.bias", &param(actor, "means.bias")?)?;
    let mean_action = g.linear(&x, &w, &b);
    g.op_n("Identity", &[&mean_action], vec!["actions".to_string()], vec![]);

    if g.nodes.iter().any(|n| n.output.is_empty()) {
        bail!("internal: a node without outputs");
    }
    Ok(ModelProto {
        ir_version: IR_VERSION,
        producer_name: "gait".to_string(),
        producer_version: env!("CARGO_PKG_VERSION").to_string(),
        doc_string: "gait policy: raw observation in, deterministic action (the mean) out; the \
                     observation normalizer and clip are inside the graph"
            .to_string(),
        graph: Some(GraphProto {
            node: g.nodes,
            name: "gait_policy".to_string(),
            initializer: g.initializers,
            input: inputs,
            output: outputs,
        }),
        opset_import: vec![OperatorSetIdProto { domain: String::new(), version: OPSET }],
        metadata_props: metadata
            .iter()
            .map(|(k, v)| StringStringEntryProto { key: k.clone(), value: v.clone() })
            .collect(),
    })
}

/// The feed-forward hidden layers over `x`: each a linear map and the activation; the last
/// layer's output.
fn feed_forward(g: &mut Graph, actor: &Actor, x: &str) -> Result<String> {
    let spec = actor.spec();
    let mut x = x.to_string();
    for i in 0..spec.layers.len() {
        let w =
            g.weight(&format!("layers.{i}.weight"), &param(actor, &format!("layers.{i}.weight"))?)?;
        let b =
            g.weight(&format!("layers.{i}.bias"), &param(actor, &format!("layers.{i}.bias"))?)?;
        let h = g.linear(&x, &w, &b);
        x = g.activation(spec.nonlinearity, &h);
    }
    Ok(x)
}

/// The LSTM layers over `x`, one step: each layer's state comes in as `h_in`/`c_in` and goes out
/// as `h_out`/`c_out` (`[layers, 1, H]`, added to `inputs` and `outputs`), with PyTorch's gate
/// order (input, forget, cell, output); the last layer's output.
fn lstm(
    g: &mut Graph,
    actor: &Actor,
    x: &str,
    inputs: &mut Vec<ValueInfoProto>,
    outputs: &mut Vec<ValueInfoProto>,
) -> Result<String> {
    let spec = actor.spec();
    let mut x = x.to_string();
    let (layers, hidden) = (spec.layers.len(), spec.layers[0]);
    ensure!(spec.layers.iter().all(|&w| w == hidden), "LSTM layers differ in width");
    let state = [Dim::Fixed(layers), Dim::Fixed(1), Dim::Fixed(hidden)];
    inputs.push(value_info("h_in", &state));
    inputs.push(value_info("c_in", &state));
    outputs.push(value_info("h_out", &state));
    outputs.push(value_info("c_out", &state));
    let split = g.int_constant("gate_split", &[hidden as i64; 4]);
    let (mut hs, mut cs) = (Vec::new(), Vec::new());
    for l in 0..layers {
        let w = |name: &str| format!("lstm.{name}_l{l}");
        let w_ih = g.weight(&w("weight_ih"), &param(actor, &w("weight_ih"))?)?;
        let w_hh = g.weight(&w("weight_hh"), &param(actor, &w("weight_hh"))?)?;
        let b_ih = g.weight(&w("bias_ih"), &param(actor, &w("bias_ih"))?)?;
        let b_hh = g.weight(&w("bias_hh"), &param(actor, &w("bias_hh"))?)?;
        let index = g.int_constant(&format!("layer_{l}"), &[l as i64]);
        // h_in[l], c_in[l]: [1, 1, H] -> [1, H].
        let pick = |g: &mut Graph, state: &str| {
            let t = g.op("Gather", &[state, &index], vec![int_attr("axis", 0)]);
            let axes = g.int_constant(&format!("{state}_squeeze_{l}"), &[0]);
            g.op("Squeeze", &[&t, &axes], vec![])
        };
        let (h, c) = (pick(g, "h_in"), pick(g, "c_in"));
        let gi = g.linear(&x, &w_ih, &b_ih);
        let gh = g.linear(&h, &w_hh, &b_hh);
        let gates = g.op("Add", &[&gi, &gh], vec![]);
        let outs = (0..4).map(|_| g.fresh()).collect();
        let q = g.op_n("Split", &[&gates, &split], outs, vec![int_attr("axis", 1)]);
        let i = g.op("Sigmoid", &[&q[0]], vec![]);
        let f = g.op("Sigmoid", &[&q[1]], vec![]);
        let cand = g.op("Tanh", &[&q[2]], vec![]);
        let o = g.op("Sigmoid", &[&q[3]], vec![]);
        let fc = g.op("Mul", &[&f, &c], vec![]);
        let ig = g.op("Mul", &[&i, &cand], vec![]);
        let c2 = g.op("Add", &[&fc, &ig], vec![]);
        let tc = g.op("Tanh", &[&c2], vec![]);
        let h2 = g.op("Mul", &[&o, &tc], vec![]);
        x = h2.clone();
        hs.push(h2);
        cs.push(c2);
    }
    // Stack the layers' states back to [layers, 1, H].
    let axes = g.int_constant("stack_axes", &[0]);
    for (states, name) in [(hs, "h_out"), (cs, "c_out")] {
        let parts: Vec<String> =
            states.iter().map(|s| g.op("Unsqueeze", &[s, &axes], vec![])).collect();
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        g.op_n("Concat", &refs, vec![name.to_string()], vec![int_attr("axis", 0)]);
    }
    Ok(x)
}

/// The serialized model.
pub fn encode(model: &ModelProto) -> Vec<u8> {
    model.encode_to_vec()
}
