/** The process entry of the full CLI (dist/cli-full.cjs): every command, through commander (main.ts). */
import { main } from "./main.js";

void main(process.argv);
