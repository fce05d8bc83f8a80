// LangGraph's checkpointer validation suite against WorklistSaver: the
// suite's own spec function with the initializer of initializer.mjs (the
// suite's CLI is not needed).  Every test must run: none is skipped.
import { specTest } from '@langchain/langgraph-checkpoint-validation';
import initializer from './initializer.mjs';

specTest(initializer);
