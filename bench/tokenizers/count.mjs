import llama3Tokenizer from "llama3-tokenizer-js";
import { encode as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { encode as cl100k } from "gpt-tokenizer/encoding/cl100k_base";
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const texts = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const out = {
  "llama3": texts.map(t => llama3Tokenizer.encode(t, { bos: false, eos: false }).length),
  "cl100k": texts.map(t => cl100k(t).length),
  "o200k": texts.map(t => o200k(t).length),
};
process.stdout.write(JSON.stringify(out));
