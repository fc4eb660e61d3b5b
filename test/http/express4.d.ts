// `express4` is an npm alias of express@4 for the adapter tests; its API is typed like express's.
declare module "express4" {
  import express from "express";
  export default express;
}
